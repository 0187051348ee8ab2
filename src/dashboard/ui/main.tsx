/**
 * The live topology page: the cluster network, then each namespace (its network, pods, Services, policies), the warm
 * pools per node and the security groups, as nested groups that fold; what is stuck in red with why. It reads only the
 * view's API (docs/topology.md).
 */
import { render, type ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type {
  NamespaceView,
  ObjectDetail,
  PodView,
  PolicyView,
  Problem,
  ServiceView,
  TopologySnapshot,
} from '../shape.ts';
import { fetchDetail, follow } from './live.ts';

/** Groups with more items than this start folded, and show this many at a time. */
const BIG = 50;

interface Selected {
  kind: ObjectDetail['kind'];
  namespace: string;
  name: string;
}

function Group(p: {
  title: ComponentChildren;
  count: number;
  stuck?: number;
  open?: boolean;
  id: string;
  children: ComponentChildren;
}) {
  const [open, setOpen] = useState(p.open ?? p.count <= BIG);
  return (
    <section class={`group${p.stuck ? ' stuck' : ''}`} data-group={p.id}>
      <button class="title" aria-expanded={open} onClick={() => setOpen(!open)}>
        <span>{open ? '▾' : '▸'}</span>
        {p.title}
        <span class="count">{p.count}</span>
        {p.stuck ? <span class="stuck-reason">{p.stuck} stuck</span> : null}
      </button>
      {open ? <div class="body">{p.children}</div> : null}
    </section>
  );
}

/** At most {@link BIG} children at a time, with a button for the next ones. */
function Paged<T>(p: { items: T[]; render: (item: T) => ComponentChildren }) {
  const [shown, setShown] = useState(BIG);
  if (p.items.length === 0) return <div class="empty">none</div>;
  return (
    <>
      {p.items.slice(0, shown).map(p.render)}
      {p.items.length > shown ? (
        <button class="more" onClick={() => setShown(shown + BIG * 4)}>
          show more ({p.items.length - shown} left)
        </button>
      ) : null}
    </>
  );
}

function Reason({ problem }: { problem: Problem | undefined }) {
  return problem ? (
    <span class="stuck-reason" data-stuck-reason title={problem.at}>
      {problem.reason}: {problem.message}
    </span>
  ) : null;
}

function Item(p: {
  sel: Selected;
  selected: Selected | undefined;
  select: (s: Selected) => void;
  problem?: Problem | undefined;
  children: ComponentChildren;
}) {
  const on =
    p.selected?.kind === p.sel.kind && p.selected.namespace === p.sel.namespace && p.selected.name === p.sel.name;
  return (
    <div
      class={`item${p.problem ? ' stuck' : ''}${on ? ' selected' : ''}`}
      data-kind={p.sel.kind}
      data-name={p.sel.name}
      data-stuck={p.problem ? 'true' : undefined}
      onClick={() => p.select(p.sel)}
    >
      {p.children}
      <Reason problem={p.problem} />
    </div>
  );
}

/** One kind of a namespace's objects (pods, Services, policies): a group of clickable items, 50 at a time. */
function Kind<T extends { uid: string; name: string; problem?: Problem | undefined }>(p: {
  id: string;
  title: string;
  kind: Selected['kind'];
  namespace: string;
  items: T[];
  render: (item: T) => ComponentChildren;
  selected: Selected | undefined;
  select: (s: Selected) => void;
}) {
  return (
    <Group
      id={`${p.id}/${p.namespace}`}
      title={p.title}
      count={p.items.length}
      stuck={p.items.filter((x) => x.problem).length}
    >
      <Paged
        items={p.items}
        render={(x) => (
          <Item
            key={x.uid}
            sel={{ kind: p.kind, namespace: p.namespace, name: x.name }}
            selected={p.selected}
            select={p.select}
            problem={x.problem}
          >
            {p.render(x)}
          </Item>
        )}
      />
    </Group>
  );
}

/** A group's name for people: Raven's names without their `raven/<cluster>/sg/` prefix; another's by its id. */
type GroupNames = ReadonlyMap<string, string>;

function podLine(pod: PodView, names: GroupNames) {
  const port = pod.port;
  return (
    <>
      <span class="name">{pod.name}</span>
      <span class="meta" data-field="addresses">
        {port ? port.addresses.join(', ') : 'no port yet'}
      </span>
      {port ? (
        <span class="meta">
          {port.mac} · {pod.node ?? port.host} · {port.warm ? 'warm' : 'cold'}
          {port.claim ? ` · claim ${port.claim}` : ''} · port {port.id}
        </span>
      ) : (
        <span class="meta">{pod.node ?? 'unscheduled'}</span>
      )}
      {port?.securityGroups.length ? (
        <span class="meta" data-field="groups">
          groups {port.securityGroups.map((id) => names.get(id) ?? id).join(', ')}
        </span>
      ) : null}
    </>
  );
}

function serviceLine(svc: ServiceView) {
  const lb = svc.loadBalancer;
  return (
    <>
      <span class="name">{svc.name}</span>
      <span class="meta">
        {svc.type} {svc.clusterIPs.join(', ')}
      </span>
      {svc.sourceRanges.length ? (
        <div class="sub" data-field="source-ranges">
          source ranges {svc.sourceRanges.join(', ')}
        </div>
      ) : null}
      {Object.keys(svc.options).length ? (
        <div class="sub" data-field="options">
          options{' '}
          {Object.entries(svc.options)
            .map(([k, v]) => `${k.replace('loadbalancer.openstack.org/', '')}=${v}`)
            .join(', ')}
        </div>
      ) : null}
      {lb ? (
        <div class="lb">
          <div class="sub" data-field="loadbalancer">
            load balancer {lb.id} · {lb.provisioningStatus}/{lb.operatingStatus} · VIP {lb.vips.join(', ')}
            {lb.floatingIps.length ? (
              <span data-field="floating-ips"> · floating IP {lb.floatingIps.join(', ')}</span>
            ) : null}
          </div>
          {lb.listeners.map((l) => (
            <div class="sub" key={l.id}>
              listener {l.protocol}/{l.port}
              {l.allowedCidrs.length ? ` · allowed ${l.allowedCidrs.join(', ')}` : ''}
            </div>
          ))}
          {lb.pools.map((pool) => (
            <div class="sub" key={pool.id} data-field="members">
              pool {pool.protocol} {pool.method} · members{' '}
              {pool.members.map((m) => `${m.address}:${m.port}`).join(', ') || 'none'}
            </div>
          ))}
        </div>
      ) : null}
    </>
  );
}

function policyLine(pol: PolicyView) {
  return (
    <>
      <span class="name">{pol.name}</span>
      <span class="meta">{pol.policyTypes.join(', ')}</span>
      {pol.groups?.map((g) => (
        <div class="sub" key={g.id} data-field="policy-group" data-role={g.role}>
          {g.role === 'target' ? 'its pods' : 'peer'}: {g.description} · {g.rules} rules · {g.members} member pods ·{' '}
          {g.neutronId ? `group ${g.neutronId}` : 'not made yet'}
        </div>
      ))}
    </>
  );
}

function matches(q: string, ...values: (string | undefined)[]): boolean {
  return values.some((v) => v !== undefined && v.toLowerCase().includes(q));
}

function Namespace(p: {
  ns: NamespaceView;
  q: string;
  /** Whether it starts open (a search opens it; otherwise its group's own rule). */
  open: boolean | undefined;
  names: GroupNames;
  selected: Selected | undefined;
  select: (s: Selected) => void;
}) {
  const { ns, q } = p;
  const pods = ns.pods.filter(
    (x) => !q || matches(q, x.name, x.uid, x.port?.id, x.port?.mac, ...(x.port?.addresses ?? [])),
  );
  const services = ns.services.filter(
    (s) =>
      !q ||
      matches(
        q,
        s.name,
        s.uid,
        s.loadBalancer?.id,
        ...s.clusterIPs,
        ...(s.loadBalancer?.vips ?? []),
        ...(s.loadBalancer?.floatingIps ?? []),
      ),
  );
  const policies = ns.policies.filter(
    (x) => !q || matches(q, x.name, x.uid, ...(x.groups ?? []).map((g) => g.neutronId)),
  );
  if (q && pods.length + services.length + policies.length === 0 && !matches(q, ns.name, ns.network?.networkId))
    return null;
  const stuck = [ns, ...ns.pods, ...ns.services, ...ns.policies].filter((x) => x.problem).length;
  const kinds = { selected: p.selected, select: p.select, namespace: ns.name };
  return (
    <Group
      id={`namespace/${ns.name}`}
      title={<span data-namespace={ns.name}>namespace {ns.name}</span>}
      count={pods.length}
      stuck={stuck}
      open={Boolean(q) || p.open}
    >
      {ns.network ? (
        <div class="sub">
          network {ns.network.networkId} · {ns.network.subnets.map((s) => `${s.cidr} (${s.subnetId})`).join(', ')}
        </div>
      ) : null}
      <Reason problem={ns.problem} />
      <Kind {...kinds} id="pods" title="pods" kind="pod" items={pods} render={(pod) => podLine(pod, p.names)} />
      <Kind {...kinds} id="services" title="services" kind="service" items={services} render={serviceLine} />
      <Kind
        {...kinds}
        id="policies"
        title="network policies"
        kind="networkpolicy"
        items={policies}
        render={policyLine}
      />
    </Group>
  );
}

function Detail({ selected }: { selected: Selected | undefined }) {
  const [detail, setDetail] = useState<ObjectDetail | string | undefined>();
  useEffect(() => {
    setDetail(undefined);
    if (selected)
      void fetchDetail(selected.kind, selected.namespace, selected.name).then(setDetail, (e: unknown) =>
        setDetail(String(e)),
      );
  }, [selected?.kind, selected?.namespace, selected?.name]);
  if (!selected)
    return (
      <aside class="group">
        <div class="empty">Click an item to see its Kubernetes object and Raven's record of it.</div>
      </aside>
    );
  return (
    <aside class="group" data-detail>
      <div class="body">
        <h2>
          {selected.kind} {selected.namespace ? `${selected.namespace}/` : ''}
          {selected.name}
        </h2>
        {typeof detail === 'string' ? <div class="stuck-reason">{detail}</div> : null}
        {detail && typeof detail !== 'string' ? (
          <>
            <h3>Neutron / Octavia (Raven's record)</h3>
            <pre data-field="record">{JSON.stringify(detail.record, null, 2) ?? 'none yet'}</pre>
            <h3>Kubernetes</h3>
            <pre data-field="kubernetes">{JSON.stringify(detail.kubernetes, null, 2)}</pre>
          </>
        ) : null}
      </div>
    </aside>
  );
}

function App() {
  const [snap, setSnap] = useState<TopologySnapshot | undefined>();
  const [live, setLive] = useState(false);
  const [namespace, setNamespace] = useState('');
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState<Selected | undefined>();
  useEffect(() => follow(setSnap, setLive), []);
  if (!snap) return <div class="empty">{live ? 'Waiting for the first snapshot…' : 'Connecting…'}</div>;
  const q = query.trim().toLowerCase();
  const c = snap.cluster;
  const shown = snap.namespaces.filter((ns) => !namespace || ns.name === namespace);
  const pods = snap.namespaces.reduce((n, ns) => n + ns.pods.length, 0);
  // More pods than one group shows at a time: every namespace starts folded (a person opens the one they look for),
  // so a big cluster's page draws its namespaces' headers, not every pod, on each change.
  const crowded = pods > BIG;
  const names: GroupNames = new Map(
    snap.securityGroups.map((g) => [g.neutronId, g.name.replace(/^raven\/[^/]+\/sg\//, '')]),
  );
  const byNode = new Map<string, TopologySnapshot['pools']>();
  for (const pool of snap.pools) byNode.set(pool.node, [...(byNode.get(pool.node) ?? []), pool]);
  return (
    <>
      <header>
        <h1>Raven · {c.clusterId}</h1>
        <span class={`live ${live ? 'on' : 'off'}`}>{live ? 'live' : 'reconnecting'}</span>
        <span>
          {snap.namespaces.length} namespaces · {pods} pods
        </span>
        {snap.stuck ? (
          <span class="stuck-reason" data-stuck-count>
            {snap.stuck} stuck
          </span>
        ) : null}
        <select aria-label="namespace" value={namespace} onChange={(e) => setNamespace(e.currentTarget.value)}>
          <option value="">all namespaces</option>
          {snap.namespaces.map((ns) => (
            <option key={ns.uid} value={ns.name}>
              {ns.name}
            </option>
          ))}
        </select>
        <input
          type="search"
          aria-label="search"
          placeholder="name, IP or id"
          value={query}
          onInput={(e) => setQuery(e.currentTarget.value)}
        />
      </header>
      <main>
        <div>
          <Group id="cluster" title="cluster network" count={c.podSubnets.length + c.serviceSubnets.length}>
            <div class="sub">
              {c.ready ? '' : 'not ensured yet · '}router {c.routerId ?? 'none'} · external network{' '}
              {c.externalNetworkId ?? 'none'} · subnets: {c.subnetStrategy}
            </div>
            {c.podSubnets.map((s) => (
              <div class="sub" key={s.subnetId}>
                pod subnet IPv{s.family} {s.cidr} ({s.subnetId})
              </div>
            ))}
            {c.serviceSubnets.map((s) => (
              <div class="sub" key={s.subnetId}>
                service subnet IPv{s.family} {s.cidr} ({s.subnetId})
              </div>
            ))}
          </Group>
          {shown.map((ns) => (
            <Namespace
              key={ns.uid}
              ns={ns}
              q={q}
              open={namespace ? true : crowded ? false : undefined}
              names={names}
              selected={selected}
              select={setSelected}
            />
          ))}
          <Group id="pools" title="warm pools" count={snap.pools.length} open={false}>
            {[...byNode].map(([node, pools]) => (
              <Group id={`pools/${node}`} key={node} title={`node ${node}`} count={pools.length}>
                {pools.map((pool) => (
                  <div class="sub" key={`${pool.networkId}/${pool.securityGroups.join(',')}`}>
                    {pool.subnetIds.join(', ')} · free {pool.free} · taken {pool.taken}
                    {pool.refilling ? ' · refilling' : ''}
                    {pool.lastRefillMs !== undefined ? ` · last refill ${Math.round(pool.lastRefillMs)} ms` : ''}
                    {` · groups ${pool.securityGroups.length}`}
                  </div>
                ))}
              </Group>
            ))}
          </Group>
          <Group id="security-groups" title="security groups" count={snap.securityGroups.length} open={false}>
            <Paged
              items={snap.securityGroups.filter((g) => !q || matches(q, g.name, g.neutronId))}
              render={(g) => (
                <div class="sub" key={g.neutronId}>
                  {g.name} · {g.neutronId} · {g.rules} rules · {g.members} member pods
                </div>
              )}
            />
          </Group>
        </div>
        <Detail selected={selected} />
      </main>
    </>
  );
}

const root = document.getElementById('root')!;
// Preact renders beside what is there: the "Loading…" placeholder goes first.
root.textContent = '';
render(<App />, root);
