/**
 * Issue 26's attacks, one case per row, made by two tenants through their own tokens: alice owns namespace `a` and
 * bob namespace `b` (a ServiceAccount each, a Role with every verb on every resource of its own namespace and nothing
 * elsewhere; the embedded API server runs with RBAC on). Raven runs as the daemon (`raven run`'s runRaven, as a child
 * process, with the cluster admin's kubeconfig) against the OpenStack simulator, with warm pools and NetworkPolicy on,
 * the namespace subnet strategy, free addresses allowed (so only the quarantine protects a released one), and a GC
 * sweep every 2 s. The faults (rows 6, 7a, 7) are the cloud operator's, made on the simulator while the tenants'
 * objects exist. Each case asserts the state the row's fix leads to: the cloud's (read from the simulator) and the
 * API server's (objects, Events), never calls.
 *
 * Not here: row 11 (a policy's deletion on the real dataplane) and the second half of row 3 (load-balancer traffic
 * into an isolated pod), which need real packets.
 */
import assert from 'node:assert/strict';
import { stat, writeFile } from 'node:fs/promises';
import { Agent } from 'undici';
import { join } from 'node:path';
import { after, before, describe, it } from '../../support/node-test.ts';
import type { Service } from '../../../src/kube/api/index.ts';
import { isForbidden, isInvalid, resources, type KubeClient } from '../../../src/kube/client/index.ts';
import { OctaviaClient } from '../../../src/openstack/index.ts';
import { groupId, groupKey, neutronRuleText, serviceNameUid } from '../../../src/reconcilers/index.ts';
import { MAX_CALL_BYTES, startNodeDaemon, type ForwardedAnswer } from '../../../src/cni/node-daemon.ts';
import { openNodeConnections } from '../../../src/cni/plugin.ts';
import { CniErrorCode, cniErrorSchema } from '../../../src/cni/spec/index.ts';
import { ensureDevExternalNetwork } from '@raven/dev';
import { call, requester } from '../../support/api.ts';
import { floodSocket } from '../../support/cni.ts';
import { service } from '../../support/service-harness.ts';
import { teardown } from '../../support/teardown.ts';
import { waitFor } from '../../support/wait.ts';
import {
  createPolicy,
  endpointSlice,
  NAMESPACE_OWNER_RULES,
  namespaceUserToken,
  podBody,
  ravenPlan,
  ravenSettings,
  startControllerChild,
  startEnv,
  tokenClient,
  waitForPort,
  untilNothingToDo,
  type ControllerChild,
  type Env,
} from './support.ts';

const CLUSTER = 'tenants';
const P = 'loadbalancer.openstack.org/';
/** quotas.securityGroupsPerNamespace and quotas.poolPortsPerNamespace. */
const GROUP_SHARE = 6;
const POOL_SHARE = 3;
/** Addresses of the external network outside its allocation pool (.10–.250) that the operator grants to `a`. */
const GRANTED = ['203.0.113.252', '203.0.113.253', '203.0.113.254'];
/** Each wait's bound: a load balancer built, or a GC sweep (every 2 s) and the repair it queues, on a busy machine. */
const WAIT_MS = 20_000;

describe('Two tenants under RBAC against Raven (issue 26, rows 1–12)', { timeout: 230_000 }, () => {
  let env: Env;
  let octavia: OctaviaClient;
  let raven: ControllerChild;
  /** Raven's `RAVEN_*` settings (`raven plan` takes the same). */
  let settings: Record<string, string>;
  let opsUrl: string;
  let externalNetworkId: string;
  /** alice: everything in `a`; bob: everything in `b`. Their tokens, and clients sending them. */
  const tokens: Record<'alice' | 'bob', string> = { alice: '', bob: '' };
  let alice: KubeClient;
  let bob: KubeClient;

  before(
    async () => {
      env = await startEnv(26_026, { authorizationMode: 'RBAC' });
      octavia = new OctaviaClient(env.session);
      externalNetworkId = await ensureDevExternalNetwork(env.neutron);
      const file = join(env.server.dir, 'raven.yaml');
      // File-only settings: the operator's grant to `a`, and a quick look at pending load balancers.
      await writeFile(
        file,
        JSON.stringify({
          floatingIps: { grants: [{ namespace: 'a', cidrs: ['203.0.113.252/30'] }] },
          loadBalancer: { pendingRequeueMs: 100 },
        }),
      );
      settings = {
        ...ravenSettings(CLUSTER, 'namespace'),
        RAVEN_LOG_LEVEL: 'warn',
        RAVEN_CONFIG: file,
        RAVEN_EXTERNAL_NETWORK_ID: externalNetworkId,
        RAVEN_GC_INTERVAL_SECONDS: '2',
        RAVEN_GC_GRACE_SECONDS: '0',
        RAVEN_QUOTA_SECURITY_GROUPS_PER_NAMESPACE: String(GROUP_SHARE),
        RAVEN_QUOTA_POOL_PORTS_PER_NAMESPACE: String(POOL_SHARE),
      };
      raven = startControllerChild(env, settings);
      opsUrl = await raven.opsUrl;
      await env.client.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
      for (const name of ['a', 'b'])
        await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
      tokens.alice = await namespaceUserToken(env, 'a', 'alice', NAMESPACE_OWNER_RULES);
      tokens.bob = await namespaceUserToken(env, 'b', 'bob', NAMESPACE_OWNER_RULES);
      alice = tokenClient(env, tokens.alice);
      bob = tokenClient(env, tokens.bob);
    },
    { timeout: 60_000 },
  );
  after(() =>
    teardown(
      async () => {
        if (raven && raven.proc.exitCode === null && raven.proc.signalCode === null) {
          raven.proc.kill('SIGKILL');
          await raven.exited;
        }
      },
      () => alice?.close(),
      () => bob?.close(),
      () => env?.stop(),
    ),
  );

  // --- What the tests read (as the cluster admin and the cloud operator).

  const getService = (ns: string, name: string) => env.client.get(resources.services, name, ns);
  const ingressOf = (svc: Service) => (svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip ?? i.hostname);
  const ingress = (ns: string, name: string) =>
    waitFor(`${ns}/${name} has an ingress`, async () => ingressOf(await getService(ns, name))[0], {
      timeoutMs: WAIT_MS,
      explain: () => explain(ns, name),
    });
  const ingressIs = (ns: string, name: string, ip: string) =>
    waitFor(`${ns}/${name} has ingress ${ip}`, async () => ingressOf(await getService(ns, name))[0] === ip, {
      timeoutMs: WAIT_MS,
      explain: () => explain(ns, name),
    });
  const events = async (ns: string, name: string) =>
    (
      await env.client.listAll(resources.events, {
        namespace: ns,
        fieldSelector: `involvedObject.name=${name}`,
      })
    ).items;
  const explain = async (ns: string, name: string) =>
    (await events(ns, name)).map((e) => `${e.reason}: ${e.message}`).join('; ') || 'no Events';
  const warned = (ns: string, name: string, reason: string) =>
    waitFor(
      `${ns}/${name}: ${reason}`,
      async () => (await events(ns, name)).find((e) => e.type === 'Warning' && e.reason === reason),
      { timeoutMs: WAIT_MS, explain: () => explain(ns, name) },
    );
  const lbName = (ns: string, name: string) => `raven/${CLUSTER}/${ns}/${name}`;
  const membersOf = async (ns: string, name: string) => {
    const [lb] = await octavia.loadBalancers.list({ name: lbName(ns, name) });
    const pools = lb ? await octavia.pools.list({ loadbalancer_id: lb.id }) : [];
    const members = await Promise.all(pools.map((p) => octavia.members.list(p.id)));
    return members
      .flat()
      .map((m) => m.address)
      .sort();
  };
  const groupsWithId = (id: string) =>
    env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`, `raven.uid=${id}`] });
  const vifAddress = async (ns: string, name: string) => {
    const port = await env.neutron.ports.get(await waitForPort(env.client, ns, name, WAIT_MS));
    return port.fixed_ips[0]!.ip_address;
  };

  const metrics = async () => (await fetch(`${opsUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  const successfulSweeps = async () =>
    Number(/^raven_gc_runs_total\{result="success"\} (\d+)$/m.exec(await metrics())?.[1] ?? 0);
  /** Waits until the garbage collector has swept `n` more times. */
  const sweeps = async (n: number) => {
    const from = await successfulSweeps();
    await waitFor(`${n} more GC sweeps`, async () => (await successfulSweeps()) >= from + n, { timeoutMs: WAIT_MS });
  };

  // --- What the tenants write (through their own tokens).

  const lbService = (
    client: KubeClient,
    ns: string,
    name: string,
    spec: Service['spec'] = {},
    annotations: Record<string, string> = {},
  ) =>
    client.create(
      resources.services,
      { ...service(ns, name, { type: 'LoadBalancer', ...spec }), metadata: { name, namespace: ns, annotations } },
      { namespace: ns },
    );
  const removeService = async (client: KubeClient, ns: string, name: string) => {
    await client.delete(resources.services, name, ns);
    await waitFor(`${ns}/${name} gone`, async () =>
      (await client.list(resources.services, { namespace: ns })).items.every((s) => s.metadata.name !== name),
    );
  };
  const pod = (client: KubeClient, ns: string, name: string, labels: Record<string, string>) =>
    client.create(resources.pods, podBody(ns, name, 'node-1', labels), { namespace: ns });
  /** `app=<app>` pods accept TCP 80 from each other: one group (target and peer are one set). */
  const ownSet = (client: KubeClient, ns: string, name: string, app: string) =>
    createPolicy(client, ns, name, {
      podSelector: { matchLabels: { app } },
      ingress: [{ from: [{ podSelector: { matchLabels: { app } } }], ports: [{ port: 80 }] }],
    });

  it('each token is its namespace owner: everything in its own namespace, nothing in the other', async () => {
    await alice.create(
      resources.configmaps,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'own' } },
      {
        namespace: 'a',
      },
    );
    await assert.rejects(bob.list(resources.pods, { namespace: 'a' }), isForbidden);
    await assert.rejects(alice.create(resources.pods, podBody('b', 'intruder'), { namespace: 'b' }), isForbidden);
  });

  it(
    'row 1: a floating-subnet glob that would backtrack for ever is refused, and the controller serves the other tenant',
    { timeout: 45_000 },
    async () => {
      // The operator's subnet of the floating network whose name nearly matches: the worst case for a backtracking
      // matcher (its pool is outside what the other rows expect, so it goes again at the end).
      const decoy = await env.neutron.subnets.create({
        network_id: externalNetworkId,
        cidr: '198.51.100.0/24',
        ip_version: 4,
        name: 'a'.repeat(200),
      });
      try {
        await lbService(alice, 'a', 'frozen', {}, { [`${P}floating-subnet`]: `${'*a'.repeat(20)}*b` });
        await warned('a', 'frozen', 'FloatingSubnetNotFound');
        await lbService(bob, 'b', 'web');
        await ingress('b', 'web');
        const healthz = await fetch(`${opsUrl}/healthz`, { signal: AbortSignal.timeout(5_000) });
        assert.equal(healthz.status, 200, 'Raven answers /healthz');
        assert.deepEqual(await env.neutron.floatingIps.list({ description: lbName('a', 'frozen') }), []);
        await removeService(alice, 'a', 'frozen');
        await removeService(bob, 'b', 'web');
      } finally {
        await waitFor('the decoy subnet deleted', () => env.neutron.subnets.delete(decoy.id).then(() => true));
      }
    },
  );

  it(
    "row 2: another tenant's address is never granted, not even while its owner redeploys",
    { timeout: 60_000 },
    async () => {
      await lbService(alice, 'a', 'owner');
      const address = await ingress('a', 'owner');
      await lbService(bob, 'b', 'thief', { loadBalancerIP: address });
      await warned('b', 'thief', 'FloatingIpNotGranted');
      // A free address outside the allocation pool (a's grant) is never bob's either.
      await lbService(bob, 'b', 'outside', { loadBalancerIP: GRANTED[0] });
      await warned('b', 'outside', 'FloatingIpNotGranted');
      // The redeploy: alice deletes her Service, bob asks again while the address is let go, alice asks for it back.
      await removeService(alice, 'a', 'owner');
      const held = await env.neutron.floatingIps.list({ floating_ip_address: address });
      assert.deepEqual(
        held.map((f) => [f.port_id, f.tags.includes('raven.kind=held')]),
        [[null, true]],
        'the address is held for a/owner',
      );
      await bob.patch(resources.services, 'thief', 'b', { metadata: { labels: { again: '1' } } }, 'merge');
      await lbService(alice, 'a', 'owner', { loadBalancerIP: address });
      await ingressIs('a', 'owner', address);
      assert.deepEqual(ingressOf(await getService('b', 'thief')), []);
      assert.deepEqual(ingressOf(await getService('b', 'outside')), []);
      for (const name of ['thief', 'outside'])
        assert.deepEqual(await env.neutron.floatingIps.list({ description: lbName('b', name) }), []);
      assert.deepEqual(await env.neutron.floatingIps.list({ floating_ip_address: GRANTED[0] }), []);
      await removeService(bob, 'b', 'thief');
      await removeService(bob, 'b', 'outside');
      await removeService(alice, 'a', 'owner');
    },
  );

  it(
    "row 3 (first half): a hand-written EndpointSlice naming another tenant's isolated pod puts it behind no load balancer, with a Warning",
    { timeout: 60_000 },
    async () => {
      await pod(bob, 'b', 'victim', { app: 'victim' });
      await createPolicy(bob, 'b', 'deny-all', { podSelector: {}, policyTypes: ['Ingress'] });
      await pod(alice, 'a', 'mine', { app: 'mine' });
      const [victimIp, mineIp] = [await vifAddress('b', 'victim'), await vifAddress('a', 'mine')];
      // The kubelet's part: each pod holds its address.
      for (const [ns, name, ip] of [
        ['b', 'victim', victimIp],
        ['a', 'mine', mineIp],
      ] as const)
        await env.client.patch(resources.pods, name, ns, { status: { podIP: ip, podIPs: [{ ip }] } }, 'merge', {
          subresource: 'status',
        });
      const spec = { ...service('a', 'hijack').spec, selector: undefined, type: 'LoadBalancer' as const };
      await alice.create(resources.services, { ...service('a', 'hijack'), spec }, { namespace: 'a' });
      await alice.create(resources.endpointslices, endpointSlice('a', 'hijack', [mineIp, victimIp]), {
        namespace: 'a',
      });
      await waitFor(
        `a/hijack: members ${mineIp} only`,
        async () => (await membersOf('a', 'hijack')).join() === mineIp,
        {
          timeoutMs: WAIT_MS,
          explain: async () => `members ${(await membersOf('a', 'hijack')).join()}; ${await explain('a', 'hijack')}`,
        },
      );
      const refused = await warned('a', 'hijack', 'EndpointRefused');
      assert.ok(refused.message?.includes(victimIp), refused.message);
      await ingress('a', 'hijack');
      assert.deepEqual(await membersOf('a', 'hijack'), [mineIp], 'the victim joined once the ingress was written');
      await alice.delete(resources.endpointslices, 'hijack-x', 'a');
      await removeService(alice, 'a', 'hijack');
    },
  );

  it(
    "row 4: one tenant's NetworkPolicies past its share of security groups never keep the other's pod from its port",
    { timeout: 60_000 },
    async () => {
      const [anyGroup] = await env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`] });
      const project = anyGroup!.project_id;
      const used = (await env.neutron.quotas.details(project)).security_group!.used;
      // Room for alice's share and one group of bob's: without the share alice's policies would take it all.
      await env.neutron.quotas.update(project, { security_group: used + GROUP_SHARE + 1 });
      const names = Array.from({ length: 15 }, (_, i) => `p${String(i + 1).padStart(2, '0')}`);
      try {
        for (const name of names) await ownSet(alice, 'a', name, name);
        await ownSet(bob, 'b', 'web', 'web');
        await pod(bob, 'b', 'web', { app: 'web' });
        const port = await env.neutron.ports.get(await waitForPort(env.client, 'b', 'web', WAIT_MS));
        const [web] = await groupsWithId(groupId('pods|ns=b|pods=app=web'));
        assert.ok(web && port.security_groups.includes(web.id), "bob's pod carries its policy's group");
        const refused = await warned('a', names[GROUP_SHARE]!, 'TranslationFailed');
        assert.match(refused.message ?? '', /quotas\.securityGroupsPerNamespace/);
        const groups = await env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`] });
        assert.equal(groups.filter((g) => g.description.includes('of namespace a')).length, GROUP_SHARE);
      } finally {
        for (const name of names) await alice.delete(resources.networkpolicies, name, 'a').catch(() => undefined);
        await env.neutron.quotas.reset(project);
      }
    },
  );

  it(
    'row 5: keep-floatingip across re-creations and changed addresses keeps at most one kept and one held, each tagged for the cluster',
    { timeout: 60_000 },
    async () => {
      const keep = { [`${P}keep-floatingip`]: 'true' };
      const before = new Set((await env.neutron.floatingIps.list({})).map((f) => f.id));
      let kept: string | undefined;
      for (let round = 0; round < 2; round++) {
        await lbService(alice, 'a', 'keeper', {}, keep);
        const address = await ingress('a', 'keeper');
        assert.equal(address, kept ?? address, 'the kept address comes back');
        kept = address;
        await removeService(alice, 'a', 'keeper');
      }
      await lbService(alice, 'a', 'keeper', { loadBalancerIP: GRANTED[0] }, keep);
      await ingressIs('a', 'keeper', GRANTED[0]!);
      for (const next of GRANTED.slice(1)) {
        await alice.patch(resources.services, 'keeper', 'a', { spec: { loadBalancerIP: next } }, 'merge');
        await ingressIs('a', 'keeper', next);
      }
      await removeService(alice, 'a', 'keeper');
      const added = (await env.neutron.floatingIps.list({})).filter((f) => !before.has(f.id));
      assert.ok(
        added.length <= 2,
        `${added.length} floating IPs left for a/keeper: ${added.map((f) => f.floating_ip_address).join(', ')}`,
      );
      for (const fip of added)
        assert.ok(
          fip.tags.includes(`raven.cluster=${CLUSTER}`) && fip.tags.includes(`raven.uid=${serviceNameUid('a/keeper')}`),
          `${fip.floating_ip_address} is not tagged for the cluster and the Service name: ${fip.tags.join(',')}`,
        );
    },
  );

  it(
    "row 6: a Service's load balancer deleted out of band is found by the next sweep, with a Warning, and rebuilt once; raven plan has nothing left to do",
    { timeout: 90_000 },
    async () => {
      await lbService(alice, 'a', 'healed');
      const address = await ingress('a', 'healed');
      const [lost] = await octavia.loadBalancers.list({ name: lbName('a', 'healed') });
      await octavia.loadBalancers.delete(lost!.id, { cascade: true });
      await warned('a', 'healed', 'LoadBalancerMissing');
      const rebuilt = await waitFor(
        'a/healed rebuilt',
        async () => {
          const now = await octavia.loadBalancers.list({ name: lbName('a', 'healed') });
          return now.some((lb) => lb.id !== lost!.id && lb.provisioning_status === 'ACTIVE') ? now : undefined;
        },
        { timeoutMs: WAIT_MS },
      );
      assert.equal(rebuilt.length, 1, 'no duplicate on heal');
      await ingressIs('a', 'healed', address);
      await untilNothingToDo(() => ravenPlan(env, settings), CLUSTER, 45_000);
    },
  );

  it(
    "row 7a: a rule deleted from a policy's group is made again by a sweep, once, and the metric counts what Neutron holds",
    { timeout: 60_000 },
    async () => {
      await pod(alice, 'a', 'web', { app: 'web' });
      await pod(alice, 'a', 'db', { app: 'db' });
      await createPolicy(alice, 'a', 'db-from-web', {
        podSelector: { matchLabels: { app: 'db' } },
        ingress: [{ from: [{ podSelector: { matchLabels: { app: 'web' } } }], ports: [{ port: 5432 }] }],
      });
      const db = groupId('pods|ns=a|pods=app=db');
      const web = groupId('pods|ns=a|pods=app=web');
      const want = await waitFor(
        'the policy translated',
        async () => {
          const [dbGroup, webGroup] = [(await groupsWithId(db))[0], (await groupsWithId(web))[0]];
          const text = webGroup && `ingress IPv4 tcp:5432-5432 group=${webGroup.id}`;
          return dbGroup?.security_group_rules.some((r) => neutronRuleText(r) === text) ? text : undefined;
        },
        { timeoutMs: WAIT_MS },
      );
      const rules = async () => (await groupsWithId(db))[0]?.security_group_rules ?? [];
      await env.neutron.securityGroupRules.delete((await rules()).find((r) => neutronRuleText(r) === want)!.id);
      await waitFor('the rule made again', async () => (await rules()).some((r) => neutronRuleText(r) === want), {
        timeoutMs: WAIT_MS,
      });
      assert.deepEqual((await rules()).map(neutronRuleText), [want], 'exactly the policy rule, once');
      assert.equal((await groupsWithId(db)).length, 1);
      const neutronRules = async () =>
        (await env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`] })).reduce(
          (n, g) => n + g.security_group_rules.length,
          0,
        );
      await waitFor('raven_security_group_rules counts what Neutron holds', async () => {
        return new RegExp(`^raven_security_group_rules ${await neutronRules()}$`, 'm').test(await metrics());
      });
    },
  );

  it(
    "row 7: Raven's open-egress group deleted out of band is made again once, the pods' ports get it back, a second copy is swept; raven plan has nothing left to do",
    { timeout: 90_000 },
    async () => {
      const id = groupId(groupKey({ kind: 'open', direction: 'egress' }));
      const [old] = await groupsWithId(id);
      assert.ok(old, 'the open-egress group exists');
      // What the operator must do to delete it: take it off every port first.
      const stripped = await env.neutron.ports.list({ security_groups: [old.id] });
      for (const port of stripped)
        await env.neutron.ports.update(port.id, { security_groups: port.security_groups.filter((g) => g !== old.id) });
      await env.neutron.securityGroups.delete(old.id);
      const made = await waitFor(
        'the open-egress group made again',
        async () => (await groupsWithId(id)).find((g) => g.id !== old.id),
        { timeoutMs: WAIT_MS },
      );
      assert.deepEqual(made.security_group_rules.map(neutronRuleText).sort(), [
        'egress IPv4 any any',
        'egress IPv6 any any',
      ]);
      const created = await pod(bob, 'b', 'after-heal', { app: 'after-heal' });
      const portId = await waitForPort(env.client, 'b', 'after-heal', WAIT_MS);
      // A pool port's groups are written by its claim, which lands after the VIF: read the port once it is the pod's.
      const port = await waitFor(
        "the pod's port claimed in Neutron",
        async () => {
          const got = await env.neutron.ports.get(portId);
          return got.device_id === created.metadata.uid ? got : undefined;
        },
        { timeoutMs: WAIT_MS },
      );
      assert.ok(port.security_groups.includes(made.id), 'a new pod carries the group made again');
      // Two sweeps later, still this one copy.
      await sweeps(2);
      for (const { id: portId, device_id, name } of stripped.filter((p) => p.device_id !== '')) {
        const [now] = await env.neutron.ports.list({ id: portId });
        assert.ok(!now || now.security_groups.includes(made.id), `${name} (${device_id}) did not get it back`);
      }
      assert.deepEqual(
        (await groupsWithId(id)).map((g) => g.id),
        [made.id],
        'no second copy made on heal',
      );
      // A second copy with its tags (what a create whose answer was lost leaves) is swept; the record's copy stays.
      const copy = await env.neutron.securityGroups.create({ name: made.name, description: made.description });
      await env.neutron.tags.replace('security-groups', copy.id, [...made.tags]);
      await waitFor('the second copy swept', async () => (await groupsWithId(id)).map((g) => g.id).join() === made.id, {
        timeoutMs: WAIT_MS,
      });
      await untilNothingToDo(() => ravenPlan(env, settings), CLUSTER, 45_000);
    },
  );

  it('row 8: a tenant calling the fault API is refused, and nothing is installed', async () => {
    const agent = new Agent({ connect: { ca: env.server.caPem } });
    const asAlice = requester(env.server.url, tokens.alice, agent);
    try {
      for (const [path, body] of [
        ['/_raven/faults/rules', { path: '/api', count: 100, status: 500 }],
        ['/_raven/faults/compact', {}],
        ['/_raven/faults/drop-watches', { mode: 'abort' }],
      ] as const)
        assert.equal((await call(asAlice, 'POST', path, body)).status, 403, path);
    } finally {
      await agent.close();
    }
    const rules = await env.server.request('/_raven/faults/rules');
    assert.deepEqual(((await rules.json()) as { rules: unknown[] }).rules, []);
  });

  it('row 9: an IP address as loadbalancer.openstack.org/hostname is refused; a changed metadata.uid is a 422', async () => {
    await lbService(alice, 'a', 'named', {}, { [`${P}hostname`]: '203.0.113.77' });
    const warning = await warned('a', 'named', 'InvalidLoadBalancerOption');
    assert.match(warning.message ?? '', /hostname/);
    const svc = await getService('a', 'named');
    assert.ok(
      !(svc.status?.loadBalancer?.ingress ?? []).some((i) => i.hostname === '203.0.113.77'),
      'an IP address as the ingress hostname',
    );
    await assert.rejects(
      alice.patch(
        resources.services,
        'named',
        'a',
        { metadata: { uid: '00000000-0000-0000-0000-000000000026' } },
        'merge',
      ),
      (err: unknown) => isInvalid(err) && /metadata\.uid/.test(String((err as Error).message)),
    );
    assert.equal((await getService('a', 'named')).metadata.uid, svc.metadata.uid);
    await removeService(alice, 'a', 'named');
  });

  it(
    "row 10: a tenant's one-pod policy sets hold at most its share of free pool ports; every pod still gets its port",
    { timeout: 60_000 },
    async () => {
      const sets = ['s1', 's2', 's3'];
      for (const app of sets) {
        await ownSet(bob, 'b', app, app);
        await pod(bob, 'b', app, { app });
      }
      for (const app of sets) await waitForPort(env.client, 'b', app, WAIT_MS);
      await waitFor('PoolShareReached on namespace b', async () =>
        [...(await events('default', 'b')), ...(await events('b', 'b'))].find(
          (e) => e.reason === 'PoolShareReached' && e.involvedObject?.kind === 'Namespace',
        ),
      );
      const groups = await env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`] });
      const bobs = new Set(groups.filter((g) => g.description.includes('of namespace b')).map((g) => g.id));
      const free = (await env.neutron.ports.list({ tags: [`raven.cluster=${CLUSTER}`] })).filter(
        (p) => p.device_id === '' && p.security_groups.some((id) => bobs.has(id)),
      );
      assert.ok(free.length <= POOL_SHARE, `${free.length} free pool ports of b's policy sets`);
    },
  );

  it("row 12: raven node's socket is its owner's alone under umask 000, and a line past the cap is cut off", async () => {
    const socketPath = join(env.server.dir, 'raven-node.sock');
    const connections = await openNodeConnections({
      kubeconfig: env.server.kubeconfig,
      cloudsYaml: env.cloudsYaml,
      cloud: 'raven-sim',
    });
    const stop = new AbortController();
    const umask = process.umask(0);
    let daemon: { stopped: Promise<void> };
    try {
      daemon = await startNodeDaemon({ socketPath, connections, log: () => undefined }, stop.signal);
    } finally {
      process.umask(umask);
    }
    try {
      assert.equal((await stat(socketPath)).mode & 0o777, 0o600);
      const { answer, sent } = await floodSocket(socketPath, 50 * 1024 * 1024);
      const reply = JSON.parse(answer.trim()) as ForwardedAnswer;
      const error = cniErrorSchema.parse(JSON.parse(reply.stdout));
      assert.deepEqual(
        [reply.exitCode, error.code, error.msg],
        [1, CniErrorCode.DECODING_FAILURE, `the forwarded call is longer than ${MAX_CALL_BYTES} bytes`],
      );
      assert.ok(sent < 50 * 1024 * 1024, 'the daemon closed before the whole line was sent');
    } finally {
      stop.abort();
      await daemon.stopped;
    }
  });
});
