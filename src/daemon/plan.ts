import { silentLogger, type Logger } from '../core/index.ts';
import type { KubeObject } from '../kube/api/index.ts';
import { DryRunKubeClient, resources, type PlannedKubeWrite } from '../kube/client/index.ts';
import { DryRunCloud, NeutronClient, str, type PlannedWrite } from '../openstack/index.ts';
import { holdKindOf, ownerOf, TAG_KIND } from '../reconcilers/index.ts';
import { composeRaven } from './compose.ts';
import type { RavenConfig } from './config/index.ts';
import { connectOpenStack, kubeConnection } from './connect.ts';

export interface PlanOptions {
  /** How long the dry run may take before it stops and says what was still busy. Default 60 s. */
  timeoutMs?: number;
  /** How long nothing may be written, with every controller idle, before the run counts as converged. Default 1 s. */
  quietMs?: number;
  /** A key requeued to come back within this long keeps its controller busy. Default 5 s. */
  horizonMs?: number;
  logger?: Logger;
}

export interface Plan {
  /** One line per change (`+` create, `~` change, `-` delete), in the order the daemon would make them. */
  changes: string[];
  /** `! Warning <reason> <kind> <namespace/name>: <message>`: the Warning Events the daemon would record. */
  warnings: string[];
  /** When the run timed out: the controllers and other runnables that still had work, and how much. */
  busy?: Map<string, number>;
}

/**
 * `raven plan`: Raven itself — {@link composeRaven}, the daemon's own composition, with leader election off and no
 * ops server — on dry-run connections: reads go to the cluster and the cloud, writes are recorded, never sent, and
 * answered as they would be (the OpenStack ones from a copy-on-write overlay that later reads see). It runs until
 * quiet — every controller's queue empty and nothing in flight, the records loaded, the cluster network known, one
 * garbage collection round done, and no write for `quietMs` — then runs one more garbage collection round (the
 * daemon's next), waits until quiet again, stops, and describes what was written.
 */
export async function runPlan(config: RavenConfig, options: PlanOptions = {}): Promise<Plan> {
  const logger = options.logger ?? silentLogger;
  const timeoutMs = options.timeoutMs ?? 60_000;
  const quietMs = options.quietMs ?? 1_000;
  const horizonMs = options.horizonMs ?? 5_000;
  const cloud = new DryRunCloud();
  const { qps, burst } = config.kubernetes;
  const kube = new DryRunKubeClient({
    connection: await kubeConnection(config),
    qps,
    burst,
    logger: logger.child({ component: 'kube-client' }),
  });
  const session = connectOpenStack(config, logger, [cloud.interceptor]);
  const raven = await composeRaven({
    config: { ...config, leaderElection: { ...config.leaderElection, enabled: false } },
    logger,
    connections: { client: kube, eventsClient: kube, session },
    ops: false,
  });
  let lastWrite = Date.now();
  const touched = () => void (lastWrite = Date.now());
  cloud.onWrite(touched);
  // Events are what a reconcile says, not what it changes: a repeated Warning does not hold the run open.
  kube.onWrite((w) => w.resource !== 'events' && touched());
  const stop = new AbortController();
  let failure: unknown;
  const running = raven.manager.start(stop.signal).catch((err: unknown) => void (failure = err));
  const deadline = Date.now() + timeoutMs;
  // A key due back soon (a load balancer step's requeue) is work still to do; a longer wait is not the plan's to wait out.
  const quiet = () => raven.manager.busy(horizonMs).size === 0 && Date.now() - lastWrite >= quietMs;
  let busy: Map<string, number> | undefined;
  let names: Map<string, string> | undefined;
  try {
    for (let round = 0; round < 2; round++) {
      while (failure === undefined && !quiet() && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      if (failure !== undefined) throw failure as Error;
      if (!quiet()) {
        busy = raven.manager.busy(horizonMs);
        if (busy.size === 0) busy.set('writes', 1);
        break;
      }
      if (round === 0) {
        await raven.gc.round(stop.signal);
        touched();
      }
    }
    // The routers the plan names, by name: the bootstrap may have read only their ids.
    const neutron = new NeutronClient(session);
    for (const w of cloud.writes())
      if ((w.action === 'attach' || w.action === 'detach') && !cloud.seen(w.id)?.object.name)
        await neutron.routers.get(w.id).catch(() => undefined);
    names = await ownerNames(kube);
  } finally {
    stop.abort();
    await running;
  }
  if (failure !== undefined) throw failure as Error;
  const text = describePlan(cloud, kube, names ?? new Map(), config);
  return { ...text, ...(busy ? { busy } : {}) };
}

/** Every pod, Service, namespace and node by uid, as `kind namespace/name`: what an owner tag names. */
async function ownerNames(kube: DryRunKubeClient): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const add = (kind: string, items: KubeObject[]) => {
    for (const o of items)
      if (o.metadata.uid)
        names.set(o.metadata.uid, `${kind} ${[o.metadata.namespace, o.metadata.name].filter(Boolean).join('/')}`);
  };
  add('pod', (await kube.listAll(resources.pods)).items);
  add('service', (await kube.listAll(resources.services)).items);
  add('namespace', (await kube.listAll(resources.namespaces)).items);
  add('node', (await kube.listAll(resources.nodes)).items);
  return names;
}

type Obj = Record<string, unknown>;

const kinds: Record<string, string> = {
  networks: 'network',
  subnets: 'subnet',
  ports: 'port',
  routers: 'router',
  floatingips: 'floating IP',
  'security-groups': 'security group',
  'security-group-rules': 'rule',
  subnetpools: 'subnet pool',
  loadbalancers: 'load balancer',
  listeners: 'listener',
  pools: 'pool',
  healthmonitors: 'health monitor',
  members: 'member',
  trunks: 'trunk',
};

/** The plan's lines: the cloud's writes in order, then the cluster's, then the Warning Events. */
export function describePlan(
  cloud: DryRunCloud,
  kube: DryRunKubeClient,
  owners: ReadonlyMap<string, string>,
  config: RavenConfig,
): { changes: string[]; warnings: string[] } {
  const writes = cloud.writes();
  const created = new Set(writes.filter((w) => w.action === 'create').map((w) => w.id));
  // A detach's id is its router's: the port it removes is its object.
  const deleted = new Set(
    writes.flatMap((w) => (w.action === 'delete' ? [w.id] : w.action === 'detach' ? [str(w.object.id)] : [])),
  );
  const label = (id: unknown): string => {
    const seen = typeof id === 'string' ? cloud.seen(id) : undefined;
    if (!seen) return str(id);
    return labelOf(seen.collection, seen.object);
  };
  const ownerText = (o: Obj): string | undefined => {
    const tags = Array.isArray(o.tags) ? (o.tags as string[]) : undefined;
    // A pod port names its pod by device_id (a free pool port by none).
    const podPort = tags?.includes(`${TAG_KIND}=pod`) && !ownerOf(tags);
    const owner = podPort
      ? typeof o.device_id === 'string' && o.device_id !== ''
        ? { kind: 'pod', uid: o.device_id }
        : undefined
      : ownerOf(tags);
    if (!owner || owner.kind === 'cluster' || owner.kind === 'securitygroup') return undefined;
    return owners.get(owner.uid) ?? `${owner.kind} ${owner.uid} is gone`;
  };
  const kindOf = (collection: string) => kinds[collection.split('/').at(-1) ?? collection] ?? collection;
  const described = (w: PlannedWrite, o: Obj): string => {
    const owner = ownerText(o);
    const subnets = ((o.fixed_ips as Obj[] | undefined) ?? []).map((ip) => label(ip.subnet_id));
    const on = w.collection === 'ports' && subnets.length > 0 ? ` on subnet ${subnets.join(', ')}` : '';
    return `${kindOf(w.collection)} ${labelOf(w.collection, o)}${owner ? ` (${owner})` : ''}${on}`;
  };
  // A floating IP let go of is held for its Service's name: one line, not one per write.
  const held = new Set(
    writes.flatMap((w) =>
      w.collection === 'floatingips' && holdKindOf(w.changes?.tags as string[] | undefined, config.clusterId)
        ? [w.id]
        : [],
    ),
  );
  const lines: string[] = [];
  for (const w of writes) {
    const base = w.collection.split('/').at(-1) ?? w.collection;
    switch (w.action) {
      case 'create': {
        if (deleted.has(w.id) || base === 'members') break;
        const o = cloud.seen(w.id)?.object ?? w.object;
        if (base === 'security-group-rules') {
          // A new group's rules are counted on its own line.
          if (!created.has(str(o.security_group_id)))
            lines.push(`+ rule ${ruleText(o)} in security group ${label(o.security_group_id)}`);
        } else if (base === 'security-groups') {
          const rules = cloud.planned('security-group-rules').filter((r) => r.security_group_id === w.id).length;
          lines.push(`+ security group ${labelOf(base, o)} with ${rules} rule(s)`);
        } else if (base === 'floatingips') {
          const address = typeof w.spec?.floating_ip_address === 'string' ? `${w.spec.floating_ip_address} ` : '';
          const owner = ownerText(o);
          lines.push(`+ floating IP ${address}${owner ? `for ${owner}` : `on port ${label(o.port_id)}`}`.trimEnd());
        } else if (base === 'listeners') {
          lines.push(
            `+ listener ${str(o.protocol)}:${str(o.protocol_port)} of load balancer ${label(o.loadbalancer_id)}`,
          );
        } else if (base === 'pools') {
          const lb = (o.loadbalancers as Obj[] | undefined)?.[0]?.id;
          lines.push(`+ pool ${labelOf(base, o)} (${str(o.protocol)}) of load balancer ${label(lb)}`);
        } else if (base === 'healthmonitors') {
          lines.push(`+ health monitor ${str(o.type)} of pool ${label(o.pool_id)}`);
        } else if (base === 'subnets') {
          lines.push(`+ subnet ${labelOf(base, o)} ${str(o.cidr)} on network ${label(o.network_id)}`);
        } else lines.push(`+ ${described(w, o)}`);
        break;
      }
      case 'update': {
        if (created.has(w.id) || deleted.has(w.id)) break;
        const before = w.before ?? {};
        const changes = w.changes ?? {};
        if (held.has(w.id) && !holdKindOf(changes.tags as string[] | undefined, config.clusterId)) break;
        if (held.has(w.id)) {
          const owner = ownerText(before);
          lines.push(
            `~ floating IP ${str(before.floating_ip_address)}${owner ? ` of ${owner}` : ''} held for its name for ${config.floatingIps.quarantineSeconds} s, then deleted`,
          );
          break;
        }
        if (base === 'ports' && typeof changes.device_id === 'string' && changes.device_id !== before.device_id) {
          lines.push(`~ port ${labelOf(base, before)} claimed: now ${described(w, w.object)}`);
          break;
        }
        const what = Object.keys(changes)
          .filter((k) => JSON.stringify(changes[k]) !== JSON.stringify(before[k]))
          .map((k) => (k === 'tags' ? tagChange(before.tags, changes.tags) : `${k}: ${JSON.stringify(changes[k])}`));
        if (what.length > 0) lines.push(`~ ${described(w, before)}: ${what.join(', ')}`);
        break;
      }
      case 'delete':
        if (created.has(w.id)) break;
        // A new group's rules (Neutron's defaults among them) are counted on its own line.
        if (base === 'security-group-rules' && created.has(str(w.object.security_group_id))) break;
        if (base === 'security-group-rules')
          lines.push(`- rule ${ruleText(w.object)} of security group ${label(w.object.security_group_id)}`);
        else lines.push(`- ${described(w, w.object)}`);
        break;
      case 'attach': {
        const subnets = ((w.object.fixed_ips as Obj[] | undefined) ?? []).map((ip) => label(ip.subnet_id));
        lines.push(`+ interface of router ${label(w.id)} on subnet ${subnets.join(', ')}`);
        break;
      }
      case 'detach': {
        if (created.has(str(w.object.id))) break;
        const subnets = ((w.object.fixed_ips as Obj[] | undefined) ?? []).map((ip) => label(ip.subnet_id));
        lines.push(`- interface of router ${label(w.id)} on subnet ${subnets.join(', ')}`);
        break;
      }
      case 'members': {
        const members = ((w.object.members as Obj[] | undefined) ?? []).map(
          (m) => `${str(m.address)}:${str(m.protocol_port)}`,
        );
        lines.push(`~ members of pool ${label(w.id)}: ${members.sort().join(', ') || '(none)'}`);
        break;
      }
      case 'add-subports':
      case 'remove-subports': {
        const sign = w.action === 'add-subports' ? '+' : '-';
        for (const s of (w.changes?.sub_ports as Obj[] | undefined) ?? [])
          lines.push(`${sign} subport ${label(s.port_id)} (VLAN ${str(s.segmentation_id)}) of trunk ${label(w.id)}`);
        break;
      }
    }
  }
  // The members of a pool are written once each reconcile that changes them: the last list stands.
  const changes = lastOfEach(lines, (l) => (l.startsWith('~ members of pool ') ? l.split(':')[0] : undefined));
  const kubeLines = describeKube(kube, (address) => (cloud.madeUp(address) ? '(new address)' : address));
  return { changes: [...changes, ...kubeLines.changes], warnings: kubeLines.warnings };
}

function lastOfEach(lines: string[], keyOf: (line: string) => string | undefined): string[] {
  const last = new Map<string, number>();
  lines.forEach((l, i) => {
    const key = keyOf(l);
    if (key !== undefined) last.set(key, i);
  });
  return lines.filter((l, i) => {
    const key = keyOf(l);
    return key === undefined || last.get(key) === i;
  });
}

function labelOf(collection: string, o: Obj): string {
  const base = collection.split('/').at(-1) ?? collection;
  if (base === 'floatingips') return str(o.floating_ip_address ?? o.id);
  if (base === 'listeners') return `${str(o.protocol)}:${str(o.protocol_port)}`;
  if (base === 'members') return `${str(o.address)}:${str(o.protocol_port)}`;
  return typeof o.name === 'string' && o.name !== '' ? o.name : str(o.id);
}

function ruleText(r: Obj): string {
  const ports =
    r.port_range_min === null || r.port_range_min === undefined
      ? ''
      : r.port_range_min === r.port_range_max
        ? `:${str(r.port_range_min)}`
        : `:${str(r.port_range_min)}-${str(r.port_range_max)}`;
  const remote = r.remote_ip_prefix ?? (r.remote_group_id ? `group ${str(r.remote_group_id)}` : 'any');
  return `${str(r.direction)} ${str(r.ethertype)} ${str(r.protocol ?? 'any')}${ports} ${str(remote)}`;
}

function tagChange(before: unknown, after: unknown): string {
  const b = Array.isArray(before) ? (before as string[]) : [];
  const a = Array.isArray(after) ? (after as string[]) : [];
  return `tags ${[...a.filter((t) => !b.includes(t)).map((t) => `+${t}`), ...b.filter((t) => !a.includes(t)).map((t) => `-${t}`)].join(' ')}`;
}

const kubeKinds: Record<string, string> = { pods: 'pod', services: 'service', namespaces: 'namespace' };

/** The cluster's changes, one line each, from what each object was to what it would be; Warning Events apart. */
function describeKube(
  kube: DryRunKubeClient,
  shown: (address: string) => string,
): { changes: string[]; warnings: string[] } {
  const changes: string[] = [];
  const warnings = new Set<string>();
  const done = new Set<string>();
  for (const w of kube.writes()) {
    if (w.resource === 'events') {
      const event = w.after as Obj | undefined;
      if (w.action === 'create' && event?.type === 'Warning') {
        const io = (event.involvedObject ?? {}) as Obj;
        const who = [io.namespace, io.name].filter(Boolean).map(str).join('/');
        warnings.add(`! Warning ${str(event.reason)} ${str(io.kind).toLowerCase()} ${who}: ${str(event.message)}`);
      }
      continue;
    }
    const key = `${w.resource}/${w.namespace ?? ''}/${w.name}`;
    if (done.has(key)) continue;
    done.add(key);
    changes.push(...objectChanges(w, kube, shown));
  }
  return { changes, warnings: [...warnings] };
}

function objectChanges(w: PlannedKubeWrite, kube: DryRunKubeClient, shown: (address: string) => string): string[] {
  const kind = kubeKinds[w.resource] ?? w.resource;
  const who = `${kind} ${[w.namespace, w.name].filter(Boolean).join('/')}`;
  const before = firstBefore(kube, w);
  const after = lastAfter(kube, w);
  if (!after) return [`- ${who}`];
  if (!before) return [`+ ${who}`];
  const lines: string[] = [];
  const ba = before.metadata.annotations ?? {};
  const aa = after.metadata.annotations ?? {};
  for (const k of new Set([...Object.keys(ba), ...Object.keys(aa)])) {
    if (ba[k] === aa[k]) continue;
    lines.push(`${aa[k] === undefined ? '-' : '~'} annotation ${k} on ${who}`);
  }
  const bf = before.metadata.finalizers ?? [];
  const af = after.metadata.finalizers ?? [];
  for (const f of af) if (!bf.includes(f)) lines.push(`+ finalizer ${f} on ${who}`);
  for (const f of bf) if (!af.includes(f)) lines.push(`- finalizer ${f} from ${who}`);
  const bs = JSON.stringify((before as Obj).status ?? {});
  const as = JSON.stringify((after as Obj).status ?? {});
  if (bs !== as) {
    const ingress = (
      (after as { status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } } }).status?.loadBalancer
        ?.ingress ?? []
    ).map((i) => (i.ip ? shown(i.ip) : (i.hostname ?? '')));
    lines.push(`~ status of ${who}: load balancer ingress ${ingress.join(', ') || '(none)'}`);
  }
  return lines;
}

function firstBefore(kube: DryRunKubeClient, w: PlannedKubeWrite): KubeObject | undefined {
  return kube.writes().find((x) => x.resource === w.resource && x.namespace === w.namespace && x.name === w.name)
    ?.before;
}

function lastAfter(kube: DryRunKubeClient, w: PlannedKubeWrite): KubeObject | undefined {
  return kube
    .writes()
    .filter((x) => x.resource === w.resource && x.namespace === w.namespace && x.name === w.name)
    .at(-1)?.after;
}
