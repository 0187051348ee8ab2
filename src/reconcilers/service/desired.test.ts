import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { deepFreeze } from '../../core/index.ts';
import type { KubeObject } from '../../kube/api/index.ts';
import {
  OctaviaVersions,
  providerTraits,
  type FloatingIp,
  type Listener,
  type LoadBalancer,
  type Member,
  type Pool,
  type Port,
} from '../../openstack/index.ts';
import { ownerTags, type SubnetInfo } from '../network/index.ts';
import { splitActual } from './actual.ts';
import {
  desiredListeners,
  endpointsMembers,
  endpointsToService,
  serviceSliceIndexers,
  sliceMembers,
  sliceToService,
  type DesiredListener,
} from './desired.ts';
import { LISTENER_DEFAULTS, serviceOptions } from './options.ts';
import { memberUpdate, nextStep } from './plan.ts';
import { trimEndpoints } from './trim.ts';
import { wantsLoadBalancer } from './types.ts';

const ALL_MONITORS = providerTraits(undefined).monitorTypes;

const svc = (spec: Record<string, unknown>): KubeObject =>
  deepFreeze({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'shop', uid: 'u1' },
    spec: { clusterIP: '10.96.1.1', ...spec },
  });
/** Zed's Octavia. */
const zed = new OctaviaVersions([{ id: 'v2.26', major: 2, minor: 26, status: 'CURRENT' }]);
const plain = serviceOptions(svc({}), zed, {
  floatingNetworks: [],
  defaultFloatingNetworkId: undefined,
  healthMonitor: false,
  provider: providerTraits(undefined),
}).options;
const subnet: SubnetInfo = {
  networkId: 'n',
  subnetId: 'pods',
  cidr: '10.244.0.0/16',
  gatewayIp: '10.244.0.1',
  mtu: 1450,
};
const sl = (o: Record<string, unknown>): KubeObject =>
  deepFreeze({
    apiVersion: 'discovery.k8s.io/v1',
    kind: 'EndpointSlice',
    metadata: { name: 's', namespace: 'shop', labels: { 'kubernetes.io/service-name': 'web' } },
    addressType: 'IPv4',
    ...o,
  });

describe('service: which Services want a load balancer', () => {
  it('LoadBalancer (no other class), externalIPs, or any clusterIP with emulateKubeProxy; never headless or ExternalName', () => {
    const off = { emulateKubeProxy: false };
    const on = { emulateKubeProxy: true };
    assert.equal(wantsLoadBalancer(svc({ type: 'LoadBalancer' }), off), true);
    assert.equal(wantsLoadBalancer(svc({ type: 'LoadBalancer', loadBalancerClass: 'example.com/other' }), off), false);
    assert.equal(wantsLoadBalancer(svc({ externalIPs: ['1.2.3.4'] }), off), true);
    assert.equal(wantsLoadBalancer(svc({ type: 'ClusterIP' }), off), false);
    assert.equal(wantsLoadBalancer(svc({ type: 'ClusterIP' }), on), true);
    assert.equal(wantsLoadBalancer(svc({ type: 'NodePort' }), on), true);
    assert.equal(wantsLoadBalancer(svc({ clusterIP: 'None', type: 'LoadBalancer' }), on), false);
    assert.equal(
      wantsLoadBalancer(svc({ type: 'ExternalName', clusterIP: undefined, externalIPs: ['1.2.3.4'] }), on),
      false,
    );
    assert.equal(wantsLoadBalancer(undefined, on), false);
  });
});

describe('service: members from EndpointSlices and Endpoints', () => {
  const port = { name: 'http', port: 80, targetPort: 8080 };
  it('takes ready endpoints (nil ready counts as ready) on the slice port of the same name, each address once', () => {
    const slices = [
      sl({
        ports: [
          { name: 'http', port: 8080, protocol: 'TCP' },
          { name: 'dns', port: 53, protocol: 'UDP' },
        ],
        endpoints: [
          { addresses: ['10.244.0.2'], conditions: { ready: true } },
          { addresses: ['10.244.0.3'], conditions: { ready: false } },
          { addresses: ['10.244.0.1'] },
        ],
      }),
      sl({
        ports: [{ name: 'http', port: 8080 }],
        endpoints: [
          { addresses: ['10.244.0.2'], conditions: { ready: true } },
          { addresses: ['192.168.9.9'], conditions: { ready: true } },
        ],
      }),
      sl({ addressType: 'IPv6', ports: [{ name: 'http', port: 8080 }], endpoints: [{ addresses: ['fd00::1'] }] }),
    ];
    assert.deepEqual(sliceMembers(slices, port, subnet), [
      { address: '10.244.0.1', protocol_port: 8080, subnet_id: 'pods' },
      { address: '10.244.0.2', protocol_port: 8080, subnet_id: 'pods' },
      // Outside the pods' subnet (a host-network pod): Octavia routes to it from the VIP subnet.
      { address: '192.168.9.9', protocol_port: 8080 },
    ]);
    assert.deepEqual(
      sliceMembers(slices, { name: 'dns', port: 53, protocol: 'UDP' }, subnet).map((m) => m.protocol_port),
      [53, 53],
    );
  });
  it('falls back to a numeric targetPort when no slice port has the name; reads core Endpoints the same way', () => {
    const slices = [sl({ ports: [{ name: 'other', port: 8080 }], endpoints: [{ addresses: ['10.244.0.9'] }] })];
    assert.deepEqual(sliceMembers(slices, port, undefined), [{ address: '10.244.0.9', protocol_port: 8080 }]);
    assert.deepEqual(sliceMembers(slices, { name: 'http', port: 80, targetPort: 'web' }, undefined), []);
    const endpoints = deepFreeze({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web', namespace: 'shop' },
      subsets: [
        {
          addresses: [{ ip: '10.244.0.5' }],
          notReadyAddresses: [{ ip: '10.244.0.6' }],
          ports: [{ name: 'http', port: 8080 }],
        },
      ],
    });
    assert.deepEqual(endpointsMembers(endpoints, port, subnet), [
      { address: '10.244.0.5', protocol_port: 8080, subnet_id: 'pods' },
    ]);
  });
  it('Endpoints (the fallback): ready addresses of every subset on the port matched by name, else by numeric targetPort; never notReadyAddresses', () => {
    const endpoints = deepFreeze({
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web', namespace: 'shop' },
      subsets: [
        {
          addresses: [{ ip: '10.244.0.7' }, { ip: '10.244.0.5' }],
          notReadyAddresses: [{ ip: '10.244.0.6' }],
          ports: [
            { name: 'http', port: 8080, protocol: 'TCP' },
            { name: 'dns', port: 5353, protocol: 'UDP' },
          ],
        },
        // A second subset (pods with another port number under the same name), an IPv6 address and a duplicate.
        {
          addresses: [{ ip: '10.244.1.9' }, { ip: 'fd00::9' }, { ip: '10.244.0.5' }],
          ports: [{ name: 'http', port: 9090 }],
        },
        { notReadyAddresses: [{ ip: '10.244.2.2' }], ports: [{ name: 'http', port: 8080 }] },
      ],
    });
    assert.deepEqual(endpointsMembers(endpoints, port, subnet), [
      { address: '10.244.0.5', protocol_port: 8080, subnet_id: 'pods' },
      { address: '10.244.0.5', protocol_port: 9090, subnet_id: 'pods' },
      { address: '10.244.0.7', protocol_port: 8080, subnet_id: 'pods' },
      { address: '10.244.1.9', protocol_port: 9090, subnet_id: 'pods' },
    ]);
    assert.deepEqual(endpointsMembers(endpoints, { name: 'dns', port: 53, protocol: 'UDP' }, undefined), [
      { address: '10.244.0.5', protocol_port: 5353 },
      { address: '10.244.0.7', protocol_port: 5353 },
    ]);
    assert.deepEqual(
      endpointsMembers(endpoints, { name: 'dns', port: 53, protocol: 'TCP' }, undefined),
      [],
      'the protocol must match too',
    );
    const unnamed = deepFreeze({
      metadata: { name: 'web', namespace: 'shop' },
      subsets: [{ addresses: [{ ip: '10.244.0.3' }], ports: [{ name: 'metrics', port: 9100 }, { port: 8080 }] }],
    });
    assert.deepEqual(endpointsMembers(unnamed, { port: 80, targetPort: 8080 }, undefined), [
      { address: '10.244.0.3', protocol_port: 8080 },
    ]);
    assert.deepEqual(
      endpointsMembers(unnamed, { name: 'web', port: 80, targetPort: 8080 }, undefined),
      [{ address: '10.244.0.3', protocol_port: 8080 }],
      'numeric targetPort',
    );
    assert.deepEqual(endpointsMembers(unnamed, { name: 'web', port: 80, targetPort: 'web' }, undefined), []);
    assert.deepEqual(
      endpointsMembers(deepFreeze({ metadata: { name: 'web', namespace: 'shop' } }), port, undefined),
      [],
    );
  });
  it('an Endpoints change maps to its Service only while the Service has no EndpointSlice', () => {
    const byService = new Map<string, KubeObject[]>([['shop/sliced', [sl({})]]]);
    const slices = {
      get: () => undefined,
      list: () => [],
      byIndex: (_: string, key: string) => byService.get(key) ?? [],
    };
    const map = endpointsToService(slices);
    assert.deepEqual(map(deepFreeze({ metadata: { name: 'web', namespace: 'shop' } })), ['shop/web']);
    assert.deepEqual(map(deepFreeze({ metadata: { name: 'sliced', namespace: 'shop' } })), []);
    assert.deepEqual(map(deepFreeze({ metadata: { name: 'x' } })), []);
  });
  it('trims Endpoints to identity, ready IPs and ports', () => {
    const full: KubeObject = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: {
        name: 'web',
        namespace: 'shop',
        uid: 'e1',
        resourceVersion: '7',
        annotations: { 'endpoints.kubernetes.io/last-change-trigger-time': 'x' },
        managedFields: [{ manager: 'kcm' }],
      },
      subsets: [
        {
          addresses: [
            {
              ip: '10.244.0.5',
              nodeName: 'n1',
              targetRef: { kind: 'Pod', name: 'web-1', namespace: 'shop', uid: 'p1' },
            },
          ],
          notReadyAddresses: [{ ip: '10.244.0.6', targetRef: { kind: 'Pod', name: 'web-2' } }],
          ports: [{ name: 'http', port: 8080, protocol: 'TCP', appProtocol: 'http' }],
        },
      ],
    };
    const trimmed = trimEndpoints(full);
    assert.deepEqual(JSON.parse(JSON.stringify(trimmed)), {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'web', namespace: 'shop', uid: 'e1', resourceVersion: '7' },
      subsets: [{ addresses: [{ ip: '10.244.0.5' }], ports: [{ name: 'http', port: 8080, protocol: 'TCP' }] }],
    });
    assert.deepEqual(endpointsMembers(trimmed, port, undefined), endpointsMembers(full, port, undefined));
  });
  it('maps and indexes a slice to its Service key', () => {
    const s = sl({});
    assert.deepEqual(sliceToService(s), ['shop/web']);
    assert.deepEqual(serviceSliceIndexers.byService(s), ['shop/web']);
    assert.deepEqual(sliceToService(deepFreeze({ metadata: { name: 'x', namespace: 'shop' } })), []);
  });
});

describe('service: listeners per port', () => {
  it('one per port, named <lb>/<port name or number>; SCTP only when Octavia supports it', () => {
    const s = svc({
      ports: [
        { name: 'http', port: 80 },
        { port: 53, protocol: 'UDP' },
        { name: 'sig', port: 3868, protocol: 'SCTP' },
      ],
    });
    const input = {
      svc: s,
      lbName: 'raven/c/shop/web',
      members: () => [],
      options: plain,
      allowedCidrs: null,
      monitorTypes: ALL_MONITORS,
    };
    const withSctp = desiredListeners({ ...input, sctp: true });
    assert.deepEqual(
      withSctp.listeners.map((l) => [l.key, l.name]),
      [
        ['TCP:80', 'raven/c/shop/web/http'],
        ['UDP:53', 'raven/c/shop/web/53'],
        ['SCTP:3868', 'raven/c/shop/web/sig'],
      ],
    );
    const without = desiredListeners({ ...input, sctp: false });
    assert.deepEqual(
      without.listeners.map((l) => l.key),
      ['TCP:80', 'UDP:53'],
    );
    assert.equal(without.skipped[0]?.port.name, 'sig');
  });
});

describe('service: the next Octavia step', () => {
  const want = (key: string, members: DesiredListener['members'] = []): DesiredListener => {
    const [protocol, port] = key.split(':') as ['TCP', string];
    const s = svc({ ports: [{ port: Number(port), protocol }] });
    const [d] = desiredListeners({
      svc: s,
      lbName: 'lb',
      sctp: true,
      monitorTypes: ALL_MONITORS,
      options: plain,
      allowedCidrs: null,
      members: () => members,
    }).listeners;
    return { ...d!, name: key };
  };
  const listener = (id: string, key: string, pool: string | null): Listener =>
    ({
      id,
      protocol: key.split(':')[0],
      protocol_port: Number(key.split(':')[1]),
      default_pool_id: pool,
      ...LISTENER_DEFAULTS,
      allowed_cidrs: null,
      insert_headers: {},
    }) as Listener;
  const pool = (id: string, protocol = 'TCP'): Pool =>
    ({ id, protocol, lb_algorithm: 'ROUND_ROBIN', session_persistence: null }) as Pool;
  const member = (address: string, port: number, subnetId: string | null = null): Member =>
    ({ address, protocol_port: port, subnet_id: subnetId }) as Member;

  it('removes first (pools, then listeners), then creates listeners, pools, then members; nothing when equal', () => {
    const actual = {
      listeners: [listener('l1', 'TCP:80', 'p1'), listener('l2', 'TCP:81', 'p2')],
      pools: [pool('p1'), pool('p2')],
      members: new Map([['p1', [member('10.0.0.1', 8080)]]]),
      monitors: new Map(),
    };
    assert.equal(nextStep([want('TCP:80')], actual)?.kind, 'deletePool');
    const noP2 = { ...actual, pools: [pool('p1')] };
    assert.deepEqual(nextStep([want('TCP:80')], noP2), { kind: 'deleteListener', listener: actual.listeners[1] });
    const one = { ...noP2, listeners: [actual.listeners[0]!] };
    assert.equal(nextStep([want('TCP:80'), want('UDP:53')], one)?.kind, 'createListener');
    const bare = { ...one, listeners: [listener('l1', 'TCP:80', null)], pools: [] };
    assert.equal(nextStep([want('TCP:80')], bare)?.kind, 'createPool');
    assert.equal(
      nextStep([want('TCP:80', [{ address: '10.0.0.2', protocol_port: 8080 }])], one)?.kind,
      'updateMembers',
    );
    assert.equal(nextStep([want('TCP:80', [{ address: '10.0.0.1', protocol_port: 8080 }])], one), undefined);
  });
  it('a member whose subnet must change leaves in one batch and comes back in the next', () => {
    const actual = [member('10.0.0.1', 80, null), member('10.0.0.2', 80, 'pods')];
    assert.deepEqual(
      memberUpdate(actual, [
        { address: '10.0.0.1', protocol_port: 80, subnet_id: 'pods' },
        { address: '10.0.0.2', protocol_port: 80, subnet_id: 'pods' },
        { address: '10.0.0.3', protocol_port: 80 },
      ]),
      [
        { address: '10.0.0.2', protocol_port: 80, subnet_id: 'pods' },
        { address: '10.0.0.3', protocol_port: 80 },
      ],
    );
  });
});

describe('service: ours and stale under one name', () => {
  const tags = (uid: string) => ownerTags('c', 'service', uid);
  const lb = (id: string, uid: string, port: string, created: string): LoadBalancer =>
    ({ id, tags: tags(uid), vip_port_id: port, created_at: created }) as LoadBalancer;
  const port = (id: string, t: string[] = [], ip = '10.96.1.1'): Port =>
    ({ id, tags: t, fixed_ips: [{ subnet_id: 'svc', ip_address: ip }] }) as unknown as Port;
  const fip = (id: string, t: string[], portId: string | null): FloatingIp =>
    ({ id, tags: t, port_id: portId }) as FloatingIp;
  const wanted = { uid: 'u1', subnetId: 'svc', address: '10.96.1.1' };

  it("keeps the oldest of our load balancers and adopts an untagged port; another uid's are stale", () => {
    const split = splitActual(
      {
        lbs: [
          lb('new', 'u1', 'p1', '2026-01-01T00:00:05'),
          lb('old', 'u1', 'p1', '2026-01-01T00:00:01'),
          lb('ghost', 'u0', 'p0', '2026-01-01T00:00:00'),
        ],
        ports: [port('p1'), port('p0', tags('u0'), '10.96.1.2')],
        fips: [fip('f1', [], 'p1'), fip('f0', [], 'p0'), fip('f2', tags('u0'), null)],
      },
      wanted,
    );
    assert.deepEqual([split.lb?.id, split.port?.id, split.fips.map((f) => f.id)], ['old', 'p1', ['f1']]);
    assert.deepEqual(
      [split.stale.lbs.map((l) => l.id).sort(), split.stale.ports.map((p) => p.id), split.stale.fips.map((f) => f.id)],
      [['ghost', 'new'], ['p0'], ['f0', 'f2']],
    );
  });
  it('a load balancer whose VIP port is lost is stale (rebuilt); wanting nothing makes everything stale', () => {
    const split = splitActual({ lbs: [lb('a', 'u1', 'gone', '2026-01-01T00:00:01')], ports: [], fips: [] }, wanted);
    assert.deepEqual([split.lb, split.stale.lbs.map((l) => l.id)], [undefined, ['a']]);
    const none = splitActual({ lbs: [lb('a', 'u1', 'p1', 'x')], ports: [port('p1', tags('u1'))], fips: [] }, undefined);
    assert.deepEqual([none.stale.lbs.length, none.stale.ports.length, none.port], [1, 1, undefined]);
  });
  it("a provider that makes its VIP port: the load balancer is kept by its VIP, Raven's own ports are stale", () => {
    const onVip = (id: string, subnet: string, address: string): LoadBalancer => ({
      ...lb(id, 'u1', `ovn-lb-vip-${id}`, '2026-01-01T00:00:01'),
      vip_subnet_id: subnet,
      vip_address: address,
    });
    const split = splitActual(
      { lbs: [onVip('a', 'svc', '10.96.1.1')], ports: [port('p1', tags('u1'))], fips: [] },
      { ...wanted, providerPort: true },
    );
    assert.deepEqual([split.lb?.id, split.port, split.stale.ports.map((p) => p.id)], ['a', undefined, ['p1']]);
    // the clusterIP changed (a re-created Service of the same uid cannot, but an edited spec can): rebuilt
    const moved = splitActual(
      { lbs: [onVip('a', 'svc', '10.96.1.9')], ports: [], fips: [] },
      { ...wanted, providerPort: true },
    );
    assert.deepEqual([moved.lb, moved.stale.lbs.map((l) => l.id)], [undefined, ['a']]);
  });
});
