import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import type { Service } from '../../kube/api/index.ts';
import {
  OctaviaVersions,
  providerTraits,
  type HealthMonitor,
  type Listener,
  type Pool,
} from '../../openstack/index.ts';
import { desiredListeners, type DesiredListener } from './desired.ts';
import { allowedCidrs, ANNOTATIONS, LISTENER_DEFAULTS, serviceOptions, type OptionsPolicy } from './options.ts';
import { allSteps, monitorFields, type LbChildren, type Step } from './plan.ts';

const version = (minor: number) => new OctaviaVersions([{ id: `v2.${minor}`, major: 2, minor, status: 'CURRENT' }]);
const zed = version(26);
const policy: OptionsPolicy = {
  floatingNetworks: ['ext-2'],
  defaultFloatingNetworkId: 'ext-1',
  healthMonitor: false,
  provider: providerTraits(undefined),
};
const svc = (annotations: Record<string, string>, spec: Service['spec'] = {}): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'shop', uid: 'u1', annotations },
  spec: {
    type: 'LoadBalancer',
    clusterIP: '10.96.0.10',
    ports: [{ port: 80 }, { port: 53, protocol: 'UDP' }],
    ...spec,
  },
});
const read = (annotations: Record<string, string>, spec: Service['spec'] = {}, versions = zed) =>
  serviceOptions(svc(annotations, spec), versions, policy);

describe('service options: OCCM annotations and Kubernetes fields', () => {
  it('defaults: Octavia listener defaults, ROUND_ROBIN, no PROXY, no monitor, open', () => {
    const { options, problems } = read({});
    assert.deepEqual(problems, []);
    assert.deepEqual(
      { ...options.listener, xForwardedFor: undefined },
      { ...LISTENER_DEFAULTS, xForwardedFor: undefined },
    );
    assert.equal(options.lbMethod, 'ROUND_ROBIN');
    assert.equal(options.proxy, undefined);
    assert.equal(options.monitor, undefined);
    assert.deepEqual(options.sourceRanges, []);
    assert.equal(options.internal, false);
  });

  it('reads every supported annotation with OCCM meanings', () => {
    const { options, problems } = read(
      {
        [ANNOTATIONS.internal]: 'true',
        [ANNOTATIONS.keepFloatingIp]: 'TRUE',
        [ANNOTATIONS.lbMethod]: 'least_connections',
        [ANNOTATIONS.proxyProtocol]: 'v2',
        [ANNOTATIONS.xForwardedFor]: 'true',
        [ANNOTATIONS.connectionLimit]: '100',
        [ANNOTATIONS.timeoutClientData]: '1000',
        [ANNOTATIONS.timeoutMemberConnect]: '2000',
        [ANNOTATIONS.timeoutMemberData]: '3000',
        [ANNOTATIONS.timeoutTcpInspect]: '4000',
        [ANNOTATIONS.enableHealthMonitor]: 'true',
        [ANNOTATIONS.healthMonitorDelay]: '10',
        [ANNOTATIONS.healthMonitorTimeout]: '4',
        [ANNOTATIONS.healthMonitorMaxRetries]: '2',
        [ANNOTATIONS.healthMonitorMaxRetriesDown]: '5',
        [ANNOTATIONS.floatingNetworkId]: 'ext-2',
        [ANNOTATIONS.floatingSubnetTags]: 'public, v4',
        [ANNOTATIONS.flavorId]: '0b7f5e9a-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
        [ANNOTATIONS.availabilityZone]: 'az1',
        [ANNOTATIONS.hostname]: 'web.example.com',
      },
      { sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } } },
    );
    assert.deepEqual(problems, []);
    assert.equal(options.internal, true);
    assert.equal(options.keepFloatingIp, true);
    assert.equal(options.lbMethod, 'LEAST_CONNECTIONS');
    assert.equal(options.proxy, 'PROXYV2');
    assert.deepEqual(options.listener, {
      connection_limit: 100,
      timeout_client_data: 1000,
      timeout_member_connect: 2000,
      timeout_member_data: 3000,
      timeout_tcp_inspect: 4000,
      xForwardedFor: true,
    });
    assert.deepEqual(options.monitor, { delay: 10, timeout: 4, max_retries: 2, max_retries_down: 5 });
    assert.deepEqual(options.affinity, { timeoutSeconds: 600 });
    assert.equal(options.floatingNetworkId, 'ext-2');
    assert.deepEqual(options.floatingSubnet, { tags: ['public', 'v4'] });
    assert.equal(options.hostname, 'web.example.com');
    assert.equal(read({ [ANNOTATIONS.proxyProtocol]: 'true' }).options.proxy, 'PROXY');
    assert.equal(read({ [ANNOTATIONS.proxyProtocol]: 'v1' }).options.proxy, 'PROXY');
  });

  it('a bad value is a problem naming the annotation and what it accepts', () => {
    const cases: [string, string, RegExp][] = [
      [
        ANNOTATIONS.lbMethod,
        'RANDOM',
        /lb-method: "RANDOM" is not valid; accepted: ROUND_ROBIN, LEAST_CONNECTIONS, SOURCE_IP, SOURCE_IP_PORT/,
      ],
      [
        ANNOTATIONS.proxyProtocol,
        'v3',
        /proxy-protocol: "v3" is not valid; accepted: true or v1 \(PROXY\), v2 \(PROXYV2\), false/,
      ],
      [ANNOTATIONS.connectionLimit, 'lots', /connection-limit: "lots" is not valid; accepted: an integer from -1/],
      [
        ANNOTATIONS.connectionLimit,
        '0',
        /connection-limit: "0" is not valid; accepted: -1 \(no limit\) or a positive integer/,
      ],
      [
        ANNOTATIONS.timeoutClientData,
        '-5',
        /timeout-client-data: "-5" is not valid; accepted: an integer from 0 to 2073600000/,
      ],
      [
        ANNOTATIONS.healthMonitorMaxRetries,
        '11',
        /health-monitor-max-retries: "11" is not valid; accepted: an integer from 1 to 10/,
      ],
      [ANNOTATIONS.enableHealthMonitor, 'yes', /enable-health-monitor: "yes" is not valid; accepted: true or false/],
      [ANNOTATIONS.internal, '1', /openstack-internal-load-balancer: "1" is not valid; accepted: true or false/],
      [
        ANNOTATIONS.floatingNetworkId,
        'someone-elses',
        /floating-network-id: "someone-elses" is not valid; accepted: one of floatingIps.networks \(ext-1, ext-2\)/,
      ],
      [ANNOTATIONS.flavorId, 'small', /flavor-id: "small" is not valid; accepted: an Octavia flavor id/],
      [ANNOTATIONS.hostname, 'Not A Name', /hostname: "Not A Name" is not valid; accepted: a DNS name/],
      [
        ANNOTATIONS.hostname,
        '10.0.0.1',
        /hostname: "10.0.0.1" is not valid; accepted: a DNS name .*, not an IP address/,
      ],
      ['loadbalancer.openstack.org/port-id', 'p1', /port-id is not supported by Raven/],
      ['loadbalancer.openstack.org/load-balancer-id', 'lb1', /load-balancer-id is not supported by Raven/],
    ];
    for (const [key, value, message] of cases) {
      const { problems } = read({ [key]: value });
      assert.equal(problems.length, 1, `${key}=${value}`);
      assert.equal(problems[0]!.field, key);
      assert.match(problems[0]!.message, message);
    }
    const ranges = read({}, { loadBalancerSourceRanges: ['192.0.2.0/24', 'nonsense'] }).problems;
    assert.match(ranges[0]!.message, /loadBalancerSourceRanges: "nonsense" is not valid; accepted: CIDRs/);
  });

  it('what the Octavia version lacks is a problem too: source ranges before v2.12 are refused, never ignored', () => {
    const old = read({}, { loadBalancerSourceRanges: ['192.0.2.0/24'] }, version(11)).problems;
    assert.match(
      old[0]!.message,
      /loadBalancerSourceRanges: listener allowed_cidrs \(v2\.12\) needs a newer Octavia than v2\.11/,
    );
    assert.match(
      read({ [ANNOTATIONS.proxyProtocol]: 'v2' }, {}, version(21)).problems[0]!.message,
      /PROXY protocol v2/,
    );
    assert.deepEqual(read({}, { loadBalancerSourceRanges: ['192.0.2.0/24'] }, version(12)).problems, []);
  });

  it("source ranges: the field, else Kubernetes' annotation; networks, each once", () => {
    assert.deepEqual(read({}, { loadBalancerSourceRanges: ['192.0.2.7/24', '192.0.2.0/24'] }).options.sourceRanges, [
      '192.0.2.0/24',
    ]);
    assert.deepEqual(read({ [ANNOTATIONS.sourceRanges]: '198.51.100.0/24, 2001:db8::/32' }).options.sourceRanges, [
      '198.51.100.0/24',
      '2001:db8::/32',
    ]);
  });

  it('allowed_cidrs: the VIP family only, pods kept in, never open once restricted', () => {
    assert.equal(allowedCidrs([], 4, ['10.244.0.0/16']), null);
    assert.deepEqual(allowedCidrs(['192.0.2.0/24', '2001:db8::/32'], 4, ['10.244.0.0/16']), [
      '10.244.0.0/16',
      '192.0.2.0/24',
    ]);
    assert.deepEqual(allowedCidrs(['2001:db8::/32'], 4, []), ['0.0.0.0/32']);
    assert.deepEqual(allowedCidrs(['192.0.2.0/24'], 6, ['fd00:10::/64']), ['::/128', 'fd00:10::/64']);
  });
});

describe("service options: what Octavia's provider can do", () => {
  const ovn: OptionsPolicy = { ...policy, provider: providerTraits('ovn') };
  const onOvn = (annotations: Record<string, string>, spec: Service['spec'] = {}) =>
    serviceOptions(svc(annotations, spec), zed, ovn);
  const fields = (list: { field: string }[]) => list.map((p) => p.field).sort();

  it('ovn: SOURCE_IP_PORT unless a Service names another; naming another is refused with what ovn takes', () => {
    assert.equal(onOvn({}).options.lbMethod, 'SOURCE_IP_PORT');
    assert.deepEqual(onOvn({}).problems, []);
    assert.deepEqual(onOvn({ [ANNOTATIONS.lbMethod]: 'source_ip_port' }).problems, []);
    const { problems } = onOvn({ [ANNOTATIONS.lbMethod]: 'ROUND_ROBIN' });
    assert.deepEqual(fields(problems), [ANNOTATIONS.lbMethod]);
    assert.match(problems[0]!.message, /accepted: SOURCE_IP_PORT \(provider ovn\)/);
  });

  it('ovn: PROXY, x-forwarded-for and loadBalancerSourceRanges are refused (the load balancer is left as it is)', () => {
    const { problems } = onOvn(
      { [ANNOTATIONS.proxyProtocol]: 'true', [ANNOTATIONS.xForwardedFor]: 'true' },
      { loadBalancerSourceRanges: ['192.0.2.0/24'] },
    );
    assert.deepEqual(
      fields(problems),
      [ANNOTATIONS.proxyProtocol, ANNOTATIONS.xForwardedFor, 'loadBalancerSourceRanges'].sort(),
    );
    assert.ok(problems.every((p) => p.message.includes("Octavia's provider ovn")));
  });

  it('ovn: listener limits and session affinity are accepted but said to be ignored; nothing is refused', () => {
    const { options, problems, ignored } = onOvn(
      { [ANNOTATIONS.connectionLimit]: '100', [ANNOTATIONS.timeoutClientData]: '1000' },
      { sessionAffinity: 'ClientIP' },
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(
      fields(ignored),
      [ANNOTATIONS.connectionLimit, ANNOTATIONS.timeoutClientData, 'sessionAffinity'].sort(),
    );
    assert.equal(options.affinity, undefined);
  });

  it('the amphora refuses SOURCE_IP_PORT up front; the default (or an unknown) provider leaves it to Octavia', () => {
    const amphora = { ...policy, provider: providerTraits('amphora') };
    const sipp = svc({ [ANNOTATIONS.lbMethod]: 'SOURCE_IP_PORT' });
    assert.deepEqual(fields(serviceOptions(sipp, zed, amphora).problems), [ANNOTATIONS.lbMethod]);
    assert.deepEqual(serviceOptions(sipp, zed, policy).problems, []);
    assert.deepEqual(serviceOptions(sipp, zed, { ...policy, provider: providerTraits('f5') }).problems, []);
    assert.equal(serviceOptions(svc({}), zed, amphora).options.lbMethod, 'ROUND_ROBIN');
  });

  it('ovn: an SCTP pool gets no health monitor (ovn takes TCP and UDP-CONNECT), the others get theirs', () => {
    const s = svc(
      { [ANNOTATIONS.enableHealthMonitor]: 'true' },
      {
        ports: [{ port: 80 }, { port: 53, protocol: 'UDP' }, { port: 3868, protocol: 'SCTP' }],
      },
    );
    const { options } = serviceOptions(s, zed, ovn);
    const { listeners } = desiredListeners({
      svc: s,
      lbName: 'lb',
      sctp: true,
      monitorTypes: ovn.provider.monitorTypes,
      options,
      allowedCidrs: null,
      members: () => [],
    });
    assert.deepEqual(
      listeners.map((l) => [l.key, l.monitor?.type ?? null, l.pool.lb_algorithm]),
      [
        ['TCP:80', 'TCP', 'SOURCE_IP_PORT'],
        ['UDP:53', 'UDP-CONNECT', 'SOURCE_IP_PORT'],
        ['SCTP:3868', null, 'SOURCE_IP_PORT'],
      ],
    );
  });
});

describe('service options → Octavia objects and diffs on the live load balancer', () => {
  const desire = (annotations: Record<string, string>, spec: Service['spec'] = {}): DesiredListener[] => {
    const s = svc(annotations, spec);
    const { options } = serviceOptions(s, zed, policy);
    return desiredListeners({
      svc: s,
      lbName: 'lb',
      sctp: true,
      monitorTypes: policy.provider.monitorTypes,
      options,
      allowedCidrs: allowedCidrs(options.sourceRanges, 4, []),
      members: () => [],
    }).listeners;
  };
  /** The Octavia objects a converged load balancer has for `desired` (what Raven would have made). */
  const built = (desired: DesiredListener[]): LbChildren => {
    const listeners = desired.map(
      (d, n) =>
        ({
          id: `l${n}`,
          protocol: d.listenerProtocol,
          protocol_port: d.port,
          default_pool_id: `p${n}`,
          ...d.listener,
        }) as unknown as Listener,
    );
    const pools = desired.map((d, n) => ({ id: `p${n}`, protocol: d.poolProtocol, ...d.pool }) as unknown as Pool);
    const monitors = new Map<string, HealthMonitor>();
    desired.forEach((d, n) => {
      if (d.monitor) monitors.set(`p${n}`, { id: `m${n}`, ...d.monitor } as unknown as HealthMonitor);
    });
    return { listeners, pools, members: new Map(), monitors };
  };

  it('maps affinity, PROXY, X-Forwarded-For, limits and monitors per protocol', () => {
    const [tcp, udp] = desire(
      {
        [ANNOTATIONS.xForwardedFor]: 'true',
        [ANNOTATIONS.enableHealthMonitor]: 'true',
        [ANNOTATIONS.connectionLimit]: '10',
      },
      { sessionAffinity: 'ClientIP', loadBalancerSourceRanges: ['192.0.2.0/24'] },
    );
    assert.deepEqual([tcp!.key, tcp!.listenerProtocol, tcp!.poolProtocol], ['HTTP:80', 'HTTP', 'HTTP']);
    assert.deepEqual(tcp!.listener.insert_headers, { 'X-Forwarded-For': 'true' });
    assert.deepEqual(tcp!.listener.allowed_cidrs, ['192.0.2.0/24']);
    assert.equal(tcp!.listener.connection_limit, 10);
    assert.equal(tcp!.pool.session_persistence?.persistence_timeout, null, 'Octavia refuses a timeout on TCP pools');
    assert.equal(tcp!.monitor?.type, 'TCP');
    assert.deepEqual([udp!.key, udp!.poolProtocol, udp!.monitor?.type], ['UDP:53', 'UDP', 'UDP-CONNECT']);
    assert.deepEqual(udp!.listener.insert_headers, {});
    assert.equal(udp!.pool.session_persistence?.persistence_timeout, 10800, "Kubernetes' default timeout");
    const [proxied] = desire({ [ANNOTATIONS.proxyProtocol]: 'true' });
    assert.deepEqual([proxied!.listenerProtocol, proxied!.poolProtocol], ['TCP', 'PROXY']);
  });

  it('a change is an update of the live listener, pool or monitor — never a re-creation — and only what differs changes', () => {
    const before = built(desire({}));
    assert.deepEqual(allSteps(desire({}), before), []);
    const steps = allSteps(
      desire(
        {
          [ANNOTATIONS.timeoutClientData]: '9000',
          [ANNOTATIONS.lbMethod]: 'SOURCE_IP',
          [ANNOTATIONS.enableHealthMonitor]: 'true',
        },
        { loadBalancerSourceRanges: ['192.0.2.0/24'], sessionAffinity: 'ClientIP' },
      ),
      before,
    );
    assert.deepEqual(
      steps.map((s) => s.kind),
      ['updateListener', 'updateListener', 'updatePool', 'createMonitor', 'updatePool', 'createMonitor'],
    );
    // What each step sets: only the fields that differ, and the monitor Raven's defaults.
    const changes = (s: Step) =>
      'changes' in s ? s.changes : s.kind === 'createMonitor' ? monitorFields(s.desired) : undefined;
    assert.deepEqual(
      steps.slice(0, 4).map((s) => [s.kind, 'desired' in s ? s.desired.key : '', changes(s)]),
      [
        ['updateListener', 'TCP:80', { timeout_client_data: 9000, allowed_cidrs: ['192.0.2.0/24'] }],
        ['updateListener', 'UDP:53', { timeout_client_data: 9000, allowed_cidrs: ['192.0.2.0/24'] }],
        [
          'updatePool',
          'TCP:80',
          {
            lb_algorithm: 'SOURCE_IP',
            session_persistence: {
              type: 'SOURCE_IP',
              cookie_name: null,
              persistence_timeout: null,
              persistence_granularity: null,
            },
          },
        ],
        ['createMonitor', 'TCP:80', { delay: 5, timeout: 3, max_retries: 1, max_retries_down: 3 }],
      ],
    );
    assert.equal(steps[3]!.kind === 'createMonitor' && steps[3].desired.monitor?.type, 'TCP');
    // Monitors: updated in place, removed when switched off.
    const monitored = built(desire({ [ANNOTATIONS.enableHealthMonitor]: 'true' }));
    const slower = allSteps(
      desire({ [ANNOTATIONS.enableHealthMonitor]: 'true', [ANNOTATIONS.healthMonitorDelay]: '30' }),
      monitored,
    );
    assert.deepEqual(
      slower.map((s) => [s.kind, 'desired' in s ? s.desired.name : '', changes(s)]),
      [
        ['updateMonitor', 'lb/80', { delay: 30 }],
        ['updateMonitor', 'lb/53', { delay: 30 }],
      ],
    );
    assert.deepEqual(
      allSteps(desire({}), monitored).map((s) => s.kind),
      ['deleteMonitor', 'deleteMonitor'],
    );
    // Removing the restriction opens the listener again (null), and the limits go back to Octavia's defaults.
    const restricted = built(
      desire({ [ANNOTATIONS.connectionLimit]: '5' }, { loadBalancerSourceRanges: ['192.0.2.0/24'] }),
    );
    assert.deepEqual(
      allSteps(desire({}), restricted).map((s) => (s.kind === 'updateListener' ? s.changes : s.kind)),
      [
        { connection_limit: -1, allowed_cidrs: null },
        { connection_limit: -1, allowed_cidrs: null },
      ],
    );
  });

  it('what Octavia cannot change in place is replaced below the load balancer: a pool for PROXY, a listener for X-Forwarded-For', () => {
    const plain = built(desire({}));
    assert.deepEqual(
      allSteps(desire({ [ANNOTATIONS.proxyProtocol]: 'true' }), plain).map((s) => s.kind),
      ['deletePool', 'createPool'],
    );
    assert.deepEqual(
      allSteps(desire({ [ANNOTATIONS.xForwardedFor]: 'true' }), plain).map((s) => s.kind),
      ['deletePool', 'deleteListener', 'createListener'],
    );
  });
});
