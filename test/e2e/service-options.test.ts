/**
 * Services at OCCM parity, end to end: each row is a Service (fields and annotations) created on the embedded API
 * server, reconciled by a real Controller, and the Octavia objects it should have are read back through the
 * simulator's Octavia API — or, for a bad value, the Warning it should get and no load balancer at all. One row
 * names a load balancer Raven did not make (`load-balancer-id`): Raven refuses it and never deletes it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import type { ServiceSpec } from '../../src/kube/api/index.ts';
import { resources } from '../../src/kube/client/index.ts';
import {
  provisioningState,
  type HealthMonitor,
  type Listener,
  type LoadBalancer,
  type Pool,
} from '../../src/openstack/index.ts';
import { service, slice, startSimHarness, type Harness } from '../support/service-harness.ts';
import { waitFor } from '../support/wait.ts';

const ns = 'occm';
const P = 'loadbalancer.openstack.org/';
const CLASS = 'example.com/raven';

interface Built {
  lb: LoadBalancer;
  listeners: Listener[];
  pools: Pool[];
  monitors: HealthMonitor[];
  ingress: { ip?: string; hostname?: string }[];
  clusterIP: string;
}

interface Row {
  name: string;
  spec?: ServiceSpec;
  annotations?: Record<string, string>;
  /** What Octavia must hold once the Service has converged. */
  expect?: (b: Built) => void;
  /** Or: the Warning the Service must get (reason, message), and no load balancer. */
  warning?: [string, RegExp];
}

const tcpUdp = [
  { name: 'http', port: 80, targetPort: 8080 },
  { name: 'dns', port: 53, protocol: 'UDP', targetPort: 5353 },
];
const byPort = (b: Built, port: number) => {
  const listener = b.listeners.find((l) => l.protocol_port === port)!;
  const pool = b.pools.find((p) => p.id === listener.default_pool_id)!;
  return { listener, pool, monitor: b.monitors.find((m) => m.pools.some((r) => r.id === pool.id)) };
};

const rows: Row[] = [
  {
    name: 'source-ranges',
    spec: { loadBalancerSourceRanges: ['192.0.2.7/24', '2001:db8::/32'] },
    expect: (b) => {
      // The VIP is IPv4: v4 ranges only, and the pods' range so in-cluster clients keep the clusterIP.
      assert.deepEqual(byPort(b, 80).listener.allowed_cidrs, ['10.244.0.0/16', '192.0.2.0/24']);
    },
  },
  {
    name: 'affinity',
    spec: { ports: tcpUdp, sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } },
    expect: (b) => {
      assert.deepEqual(byPort(b, 80).pool.session_persistence?.type, 'SOURCE_IP');
      assert.equal(byPort(b, 80).pool.session_persistence?.persistence_timeout, null);
      assert.equal(byPort(b, 53).pool.session_persistence?.persistence_timeout, 600);
    },
  },
  {
    name: 'limits',
    annotations: {
      [`${P}connection-limit`]: '100',
      [`${P}timeout-client-data`]: '1000',
      [`${P}timeout-member-connect`]: '2000',
      [`${P}timeout-member-data`]: '3000',
      [`${P}timeout-tcp-inspect`]: '4000',
      [`${P}lb-method`]: 'LEAST_CONNECTIONS',
    },
    expect: (b) => {
      const { listener, pool } = byPort(b, 80);
      assert.deepEqual(
        [
          listener.connection_limit,
          listener.timeout_client_data,
          listener.timeout_member_connect,
          listener.timeout_member_data,
          listener.timeout_tcp_inspect,
        ],
        [100, 1000, 2000, 3000, 4000],
      );
      assert.equal(pool.lb_algorithm, 'LEAST_CONNECTIONS');
    },
  },
  {
    name: 'proxy',
    annotations: { [`${P}proxy-protocol`]: 'v2' },
    expect: (b) => assert.deepEqual([byPort(b, 80).listener.protocol, byPort(b, 80).pool.protocol], ['TCP', 'PROXYV2']),
  },
  {
    name: 'xff',
    annotations: { [`${P}x-forwarded-for`]: 'true' },
    expect: (b) => {
      const { listener, pool } = byPort(b, 80);
      assert.deepEqual(
        [listener.protocol, listener.insert_headers, pool.protocol],
        ['HTTP', { 'X-Forwarded-For': 'true' }, 'HTTP'],
      );
    },
  },
  {
    name: 'monitors',
    spec: { ports: tcpUdp },
    annotations: {
      [`${P}enable-health-monitor`]: 'true',
      [`${P}health-monitor-delay`]: '10',
      [`${P}health-monitor-timeout`]: '4',
      [`${P}health-monitor-max-retries`]: '2',
      [`${P}health-monitor-max-retries-down`]: '5',
    },
    expect: (b) => {
      for (const [port, type] of [
        [80, 'TCP'],
        [53, 'UDP-CONNECT'],
      ] as const) {
        const m = byPort(b, port).monitor;
        assert.deepEqual([m?.type, m?.delay, m?.timeout, m?.max_retries, m?.max_retries_down], [type, 10, 4, 2, 5]);
      }
    },
  },
  {
    name: 'internal',
    annotations: { 'service.beta.kubernetes.io/openstack-internal-load-balancer': 'true' },
    expect: (b) => assert.deepEqual(b.ingress, [{ ip: b.clusterIP }]),
  },
  {
    name: 'hostname',
    annotations: { [`${P}hostname`]: 'web.example.com' },
    expect: (b) => assert.deepEqual(b.ingress, [{ hostname: 'web.example.com' }]),
  },
  {
    name: 'classed',
    spec: { loadBalancerClass: CLASS },
    expect: (b) => assert.equal(b.listeners.length, 1),
  },
  {
    name: 'bad-method',
    annotations: { [`${P}lb-method`]: 'RANDOM' },
    warning: [
      'InvalidLoadBalancerOption',
      /lb-method: "RANDOM" is not valid; accepted: ROUND_ROBIN, LEAST_CONNECTIONS/,
    ],
  },
  {
    name: 'bad-proxy',
    annotations: { [`${P}proxy-protocol`]: 'v3' },
    warning: ['InvalidLoadBalancerOption', /proxy-protocol: "v3" is not valid; accepted: true or v1/],
  },
  {
    name: 'bad-limit',
    annotations: { [`${P}connection-limit`]: 'many' },
    warning: ['InvalidLoadBalancerOption', /connection-limit: "many" is not valid; accepted: an integer/],
  },
  {
    name: 'bad-timeout',
    annotations: { [`${P}timeout-client-data`]: '-1' },
    warning: ['InvalidLoadBalancerOption', /timeout-client-data: "-1" is not valid; accepted: an integer from 0/],
  },
  {
    name: 'bad-monitor',
    annotations: { [`${P}enable-health-monitor`]: 'yes' },
    warning: ['InvalidLoadBalancerOption', /enable-health-monitor: "yes" is not valid; accepted: true or false/],
  },
  {
    name: 'bad-retries',
    annotations: { [`${P}health-monitor-max-retries`]: '0' },
    warning: [
      'InvalidLoadBalancerOption',
      /health-monitor-max-retries: "0" is not valid; accepted: an integer from 1 to 10/,
    ],
  },
  {
    name: 'bad-internal',
    annotations: { 'service.beta.kubernetes.io/openstack-internal-load-balancer': 'maybe' },
    warning: [
      'InvalidLoadBalancerOption',
      /openstack-internal-load-balancer: "maybe" is not valid; accepted: true or false/,
    ],
  },
  {
    name: 'bad-keep',
    annotations: { [`${P}keep-floatingip`]: 'sure' },
    warning: ['InvalidLoadBalancerOption', /keep-floatingip: "sure" is not valid; accepted: true or false/],
  },
  {
    name: 'bad-xff',
    annotations: { [`${P}x-forwarded-for`]: 'on' },
    warning: ['InvalidLoadBalancerOption', /x-forwarded-for: "on" is not valid; accepted: true or false/],
  },
  {
    name: 'bad-network',
    annotations: { [`${P}floating-network-id`]: 'not-offered' },
    warning: [
      'InvalidLoadBalancerOption',
      /floating-network-id: "not-offered" is not valid; accepted: one of floatingIps.networks/,
    ],
  },
  {
    name: 'bad-flavor',
    annotations: { [`${P}flavor-id`]: 'large' },
    warning: ['InvalidLoadBalancerOption', /flavor-id: "large" is not valid; accepted: an Octavia flavor id/],
  },
  {
    name: 'bad-hostname',
    annotations: { [`${P}hostname`]: 'not a name' },
    warning: ['InvalidLoadBalancerOption', /hostname: "not a name" is not valid; accepted: a DNS name/],
  },
  {
    // Upstream refuses an IP address in ingress[].hostname.
    name: 'ip-hostname',
    annotations: { [`${P}hostname`]: '192.0.2.7' },
    warning: [
      'InvalidLoadBalancerOption',
      /hostname: "192\.0\.2\.7" is not valid; accepted: a DNS name \(RFC 1123\), not an IP address/,
    ],
  },
  {
    // The field itself is validated by the API server (as kube-apiserver does); Kubernetes' annotation is not.
    name: 'bad-ranges',
    annotations: { 'service.beta.kubernetes.io/load-balancer-source-ranges': '192.0.2.0/33' },
    warning: [
      'InvalidLoadBalancerOption',
      /service\.beta\.kubernetes\.io\/load-balancer-source-ranges: "192.0.2.0\/33" is not valid; accepted: CIDRs/,
    ],
  },
  {
    name: 'bad-port-id',
    annotations: { [`${P}port-id`]: '4c0d4f6e-0000-4000-8000-000000000000' },
    warning: ['InvalidLoadBalancerOption', /port-id is not supported by Raven: the VIP port is Raven's own/],
  },
  {
    // The amphora provider refuses SOURCE_IP_PORT (501): said once, not retried until the Service changes.
    name: 'refused-method',
    annotations: { [`${P}lb-method`]: 'SOURCE_IP_PORT' },
    warning: ['LoadBalancerOptionRefused', /Amphora provider does not support SOURCE_IP_PORT algorithm/],
  },
];

describe(
  'Services at OCCM parity: fields and annotations → Octavia objects (API server + simulator)',
  { timeout: 180_000 },
  () => {
    let h: Harness;

    before(async () => {
      h = await startSimHarness({
        auth: 'noauth',
        provisioningDelayMs: 10,
        clusterId: 'occm',
        externalCidr: '172.26.4.0/24',
        config: { loadBalancer: { pendingRequeueMs: 20, stuckAfterSeconds: 600, classes: [CLASS] } },
        // The externalIPs the cases name: free addresses are Raven's to allocate only when granted.
        grants: [{ namespace: ns, cidrs: ['172.26.4.160/28'] }],
      });
      await h.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    });
    after(async () => {
      await h?.stop();
    });

    const lbOf = async (name: string) => (await h.octavia.loadBalancers.list({ name: `raven/occm/${ns}/${name}` }))[0];
    const create = (name: string, spec: ServiceSpec = {}, annotations: Record<string, string> = {}) =>
      h.client.create(
        resources.services,
        { ...service(ns, name, { type: 'LoadBalancer', ...spec }), metadata: { name, namespace: ns, annotations } },
        { namespace: ns },
      );
    const built = async (name: string): Promise<Built | undefined> => {
      const lb = await lbOf(name);
      if (!lb || provisioningState(lb).state !== 'ACTIVE') return undefined;
      const svc = await h.client.get(resources.services, name, ns);
      const listeners = await h.octavia.listeners.list({ loadbalancer_id: lb.id });
      const pools = await h.octavia.pools.list({ loadbalancer_id: lb.id });
      const monitors = (await h.octavia.healthMonitors.list()).filter((m) =>
        m.pools.some((r) => pools.some((p) => p.id === r.id)),
      );
      const ingress = svc.status?.loadBalancer?.ingress ?? [];
      const ports = svc.spec?.ports?.length ?? 0;
      // Converged: every port has its listener and pool, and the ingress is written.
      if (listeners.length !== ports || pools.length !== ports || ingress.length === 0) return undefined;
      return { lb, listeners, pools, monitors, ingress, clusterIP: svc.spec!.clusterIP! };
    };
    /** The load balancer as Octavia holds it, members too: equal before and after a reconcile that changes nothing. */
    const snapshot = async (name: string): Promise<string> => {
      const b = await built(name);
      const members = await Promise.all((b?.pools ?? []).map((p) => h.octavia.members.list(p.id)));
      return JSON.stringify({ ...b, members });
    };
    /**
     * Whether one more reconcile of `name` (the daemon's, as `raven plan` runs it) leaves the cloud as it is — once the
     * controller has left it alone: built, and the same in two looks 300 ms apart (a step can still be on its way
     * when the test's own condition first holds).
     */
    const unchangedByReconcile = async (name: string): Promise<void> => {
      const before = await waitFor(
        `${name}: settled`,
        async () => {
          const first = await snapshot(name);
          if (!(await built(name))) return undefined;
          await new Promise((r) => setTimeout(r, 300));
          return (await snapshot(name)) === first ? first : undefined;
        },
        { timeoutMs: 20_000 },
      );
      await h.reconciler.reconcile(`${ns}/${name}`, AbortSignal.timeout(10_000));
      assert.equal(await snapshot(name), before, 'a reconcile of a converged Service changed it');
    };
    const warnings = async (name: string) =>
      (await h.client.list(resources.events, { namespace: ns })).items.filter(
        (e) => e.involvedObject.name === name && e.type === 'Warning',
      );

    /** The message of the Service's Warning with this reason, once it is there. */
    const warned = (name: string, reason: string): Promise<string> =>
      waitFor(
        `${name}: Warning ${reason}`,
        async () => (await warnings(name)).find((e) => e.reason === reason)?.message,
        { timeoutMs: 20_000 },
      );

    it('every row: the Octavia objects it should have, or its Warning and no load balancer', async () => {
      await Promise.all(rows.map((r) => create(r.name, r.spec, r.annotations)));
      for (const row of rows) {
        if (row.expect) {
          const b = await waitFor(`${row.name}: converged`, () => built(row.name), { timeoutMs: 20_000 });
          row.expect(b);
        } else {
          const [reason, message] = row.warning!;
          assert.match(await warned(row.name, reason), message, row.name);
          if (reason === 'InvalidLoadBalancerOption')
            assert.equal(await lbOf(row.name), undefined, `${row.name}: nothing built`);
        }
      }
      // Another class is another implementation's: nothing, not even a Warning.
      await create('other-class', { loadBalancerClass: 'example.com/other' });
      await new Promise((r) => setTimeout(r, 500));
      assert.equal(await lbOf('other-class'), undefined);
      assert.deepEqual(await warnings('other-class'), []);
    });

    it('changes are diffs on the live load balancer (same ids); a bad value later leaves it exactly as it was', async () => {
      await create('live', { ports: tcpUdp });
      const first = await waitFor('live: converged', () => built('live'), { timeoutMs: 20_000 });
      const patch = (annotations: Record<string, string | null>, spec: ServiceSpec = {}) =>
        h.client.patch(resources.services, 'live', ns, { metadata: { annotations }, spec }, 'merge');
      await patch(
        { [`${P}connection-limit`]: '7', [`${P}enable-health-monitor`]: 'true', [`${P}lb-method`]: 'SOURCE_IP' },
        { loadBalancerSourceRanges: ['198.51.100.0/24'], sessionAffinity: 'ClientIP' },
      );
      const changed = await waitFor(
        'live: changed in place',
        async () => {
          const b = await built('live');
          return b && b.monitors.length === 2 && byPort(b, 80).listener.connection_limit === 7 ? b : undefined;
        },
        { timeoutMs: 20_000 },
      );
      assert.equal(changed.lb.id, first.lb.id);
      assert.deepEqual(changed.listeners.map((l) => l.id).sort(), first.listeners.map((l) => l.id).sort());
      assert.deepEqual(changed.pools.map((p) => p.id).sort(), first.pools.map((p) => p.id).sort());
      assert.deepEqual(byPort(changed, 53).listener.allowed_cidrs, ['10.244.0.0/16', '198.51.100.0/24']);
      assert.equal(byPort(changed, 53).pool.lb_algorithm, 'SOURCE_IP');
      assert.equal(byPort(changed, 53).pool.session_persistence?.persistence_timeout, 10800);

      // Nothing left to do once converged: the reconcile `raven plan` runs again changes nothing.
      await unchangedByReconcile('live');

      await patch({ [`${P}connection-limit`]: 'zero', [`${P}enable-health-monitor`]: null });
      await waitFor(
        'live: Warning for the bad value',
        async () => ((await warnings('live')).some((e) => e.reason === 'InvalidLoadBalancerOption') ? true : undefined),
        { timeoutMs: 20_000 },
      );
      assert.ok(
        (await warnings('live')).some((e) => /connection-limit: "zero" is not valid/.test(e.message ?? '')),
        JSON.stringify((await warnings('live')).map((e) => e.message)),
      );
      // The bad value is named and the load balancer left as it is, by this reconcile too.
      await unchangedByReconcile('live');
      await new Promise((r) => setTimeout(r, 300));
      const still = await built('live');
      assert.equal(still?.monitors.length, 2, 'the monitor the fixed Service dropped is still there: nothing changed');
      assert.equal(byPort(still, 80).listener.connection_limit, 7);
    });

    it('externalIPs: one floating IP per VIP (Neutron allows one per fixed IP), the rest named in a Warning, never a 409', async () => {
      // Addresses from .100 up: new floating IPs of other Services come from .2–.99, so none can hold these first.
      await h.client.create(
        resources.services,
        service(ns, 'ext', { type: 'ClusterIP', externalIPs: ['172.26.4.160', '172.26.4.161', '172.26.4.162'] }),
        { namespace: ns },
      );
      assert.match(
        await warned('ext', 'ExternalIPsUnsupported'),
        /externalIPs 172\.26\.4\.161, 172\.26\.4\.162 of service occm\/ext get no floating IP: Neutron associates one floating IP with one fixed IP, and the VIP \S+ carries externalIP 172\.26\.4\.160/,
      );
      assert.ok(!(await warnings('ext')).some((e) => /FloatingIPPortAlreadyAssociated/.test(e.message ?? '')));
      const fips = await h.neutron.floatingIps.list({ description: `raven/occm/${ns}/ext` });
      assert.deepEqual(
        fips.map((f) => f.floating_ip_address),
        ['172.26.4.160'],
      );

      // A LoadBalancer Service's own floating IP holds the VIP: its externalIPs are the ones refused.
      await h.client.create(
        resources.services,
        service(ns, 'lbext', { type: 'LoadBalancer', externalIPs: ['172.26.4.170'] }),
        { namespace: ns },
      );
      assert.match(await warned('lbext', 'ExternalIPsUnsupported'), /carries the load balancer's own floating IP/);
    });

    it('load-balancer-id naming a load balancer Raven did not make: refused with a Warning, and never deleted', async () => {
      const cluster = h.cluster.serviceSubnet!;
      const foreign = await h.octavia.loadBalancers.create({ name: 'someone-elses', vip_subnet_id: cluster.subnetId });
      await waitFor(
        'foreign ACTIVE',
        async () =>
          (await h.octavia.loadBalancers.find(foreign.id))?.provisioning_status === 'ACTIVE' ? true : undefined,
        { timeoutMs: 10_000 },
      );
      await create('shared', {}, { [`${P}load-balancer-id`]: foreign.id });
      await h.client.create(resources.endpointslices, slice(ns, 'shared', 'a', ['10.244.0.9']), { namespace: ns });
      await waitFor(
        'shared: Warning',
        async () =>
          (await warnings('shared')).some((e) => /load-balancer-id is not supported/.test(e.message ?? ''))
            ? true
            : undefined,
        { timeoutMs: 20_000 },
      );
      await h.client.delete(resources.services, 'shared', ns);
      await waitFor(
        'shared: gone',
        async () =>
          (await h.client.list(resources.services, { namespace: ns })).items.some((s) => s.metadata.name === 'shared')
            ? undefined
            : true,
        { timeoutMs: 20_000 },
      );
      const after = await h.octavia.loadBalancers.find(foreign.id);
      assert.equal(after?.provisioning_status, 'ACTIVE', 'the foreign load balancer is untouched');
      assert.deepEqual(await h.octavia.listeners.list({ loadbalancer_id: foreign.id }), []);
    });
  },
);
