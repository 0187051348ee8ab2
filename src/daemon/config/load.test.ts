import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from '../../../test/support/node-test.ts';
import { stringify } from 'yaml';
import { ConfigError, loadRavenConfig, type LoadRavenConfigOptions, type RavenConfigInput } from './index.ts';

const dir = mkdtempSync(join(tmpdir(), 'raven-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** Writes a config file (YAML text, or an object) and returns its path. */
function file(content: string | Record<string, unknown>): string {
  const path = join(dir, `raven-${++files}.yaml`);
  writeFileSync(path, typeof content === 'string' ? content : stringify(content));
  return path;
}

const SUBNET = '11111111-2222-4333-8444-555555555555';
const POOL = '22222222-2222-4333-8444-555555555555';
const EXT = '33333333-2222-4333-8444-555555555555';

/** A valid configuration, as a file. */
const valid = {
  clusterId: 'prod-1',
  subnets: { namespace: { cidr: '10.0.0.0/16' } },
  serviceSubnet: { cidr: '10.96.0.0/12' },
};

/** The problems `loadRavenConfig` reports (it must throw). */
function problems(options: LoadRavenConfigOptions): readonly string[] {
  try {
    loadRavenConfig({ env: {}, ...options });
  } catch (err) {
    assert.ok(err instanceof ConfigError, String(err));
    assert.equal(err.code, 'CONFIG_INVALID');
    return err.problems;
  }
  assert.fail('expected a ConfigError');
}

describe('loadRavenConfig: sources and precedence', () => {
  it('fills every default around the required settings', () => {
    const config = loadRavenConfig({ file: file(valid), env: {}, hostname: 'node-a' });
    assert.equal(config.clusterId, 'prod-1');
    assert.deepEqual(config.kubernetes, { qps: 50, burst: 100, inCluster: false });
    assert.deepEqual(config.openstack, { concurrency: { network: 8, loadBalancer: 8 }, timeoutMs: 60_000 });
    assert.deepEqual(config.subnets, {
      strategy: 'namespace',
      shared: {},
      namespace: { cidr: '10.0.0.0/16', cidrs: ['10.0.0.0/16'], prefixLength: 24, ipv6PrefixLength: 64 },
    });
    assert.deepEqual(config.securityGroups, []);
    assert.equal(config.emulateKubeProxy, false);
    assert.deepEqual(config.translations, { namespaces: true, pods: true, services: true, networkPolicies: true });
    assert.equal(config.resyncPeriodSeconds, 600);
    assert.deepEqual(config.workers, { namespaces: 2, pods: 8, services: 4 });
    assert.deepEqual(config.gc, { intervalSeconds: 300, graceSeconds: 120 });
    assert.deepEqual(config.loadBalancer, {
      pendingRequeueMs: 2000,
      stuckAfterSeconds: 600,
      classes: [],
      healthMonitor: false,
    });
    const { identity, ...election } = config.leaderElection;
    assert.deepEqual(election, {
      enabled: true,
      namespace: 'kube-system',
      name: 'raven',
      leaseDurationSeconds: 15,
      renewDeadlineSeconds: 10,
      retryPeriodSeconds: 2,
    });
    assert.match(identity, /^node-a_[0-9a-f-]{36}$/);
    assert.deepEqual(config.ops, { host: '127.0.0.1', port: 9090, topology: false, unreadyAfterSeconds: 30 });
    assert.equal(config.logLevel, 'info');
    assert.equal(config.floatingIpNetworkId, undefined);
  });

  it('returns a frozen object', () => {
    const config = loadRavenConfig({ file: file(valid), env: {} });
    assert.ok(Object.isFrozen(config) && Object.isFrozen(config.workers) && Object.isFrozen(config.securityGroups));
  });

  it('flags win over the environment, the environment over the file, the file over defaults', () => {
    const path = file({ ...valid, workers: { pods: 3, services: 3, namespaces: 3 } });
    const env = { RAVEN_WORKERS_PODS: '5', RAVEN_WORKERS_SERVICES: '5' };
    const config = loadRavenConfig({ file: path, env, flags: { workers: { pods: 7 } } });
    assert.deepEqual(config.workers, { pods: 7, services: 5, namespaces: 3 });
    assert.equal(config.resyncPeriodSeconds, 600);
  });

  it('works from the environment alone, and reads the file named by RAVEN_CONFIG', () => {
    const env = {
      RAVEN_CLUSTER_ID: 'c1',
      RAVEN_SUBNET_STRATEGY: 'shared',
      RAVEN_POD_SUBNET_ID: SUBNET,
      RAVEN_SERVICE_SUBNET_ID: SUBNET,
    };
    assert.deepEqual(loadRavenConfig({ env }).subnets.shared, { subnetId: SUBNET, subnetIds: [SUBNET] });
    const config = loadRavenConfig({ env: { RAVEN_CONFIG: file({ ...valid, logLevel: 'debug' }) } });
    assert.equal(config.logLevel, 'debug');
  });

  it('converts environment strings: booleans, numbers, lists; an empty variable is unset', () => {
    const config = loadRavenConfig({
      file: file({ ...valid, emulateKubeProxy: true, logLevel: 'warn' }),
      env: {
        RAVEN_EMULATE_KUBE_PROXY: 'false',
        RAVEN_LEADER_ELECT: 'no',
        RAVEN_OPS_PORT: '8080',
        RAVEN_SECURITY_GROUPS: ` ${SUBNET}, ${POOL},`,
        RAVEN_LOG_LEVEL: '',
      },
    });
    assert.equal(config.emulateKubeProxy, false);
    assert.equal(config.leaderElection.enabled, false);
    assert.equal(config.ops.port, 8080);
    assert.deepEqual(config.securityGroups, [SUBNET, POOL]);
    assert.equal(config.logLevel, 'warn');
  });

  it('an empty file, or empty values in it, mean defaults', () => {
    const config = loadRavenConfig({
      file: file(
        'clusterId: c1\nrouter:\nsubnets:\n  namespace:\n    cidr: 10.0.0.0/8\nserviceSubnet: {subnetId: ' +
          SUBNET +
          '}\n',
      ),
      env: {},
    });
    assert.deepEqual(config.router, { create: true }, 'no router settings: Raven makes one');
    assert.equal(
      loadRavenConfig({
        file: file(''),
        env: { RAVEN_CLUSTER_ID: 'c', FLANNEL_NET: '10.0.0.0/8', RAVEN_SERVICE_SUBNET_ID: SUBNET },
      }).clusterId,
      'c',
    );
  });

  it('a source that picks one alternative replaces what lower sources picked', () => {
    const path = file({ ...valid, subnets: { strategy: 'shared', shared: { cidr: '10.0.0.0/16' } } });
    const config = loadRavenConfig({
      file: path,
      env: { RAVEN_SERVICE_SUBNET_ID: SUBNET },
      flags: { subnets: { shared: { subnetId: SUBNET } } },
    });
    assert.deepEqual(config.subnets.shared, { subnetId: SUBNET, subnetIds: [SUBNET] });
    assert.deepEqual(config.serviceSubnet, { subnetId: SUBNET, subnetIds: [SUBNET] }); // the file's serviceSubnet.cidr gave way to the variable
  });

  it('FLANNEL_NET is the namespace range when nothing else sets one', () => {
    const base = { clusterId: 'c1', serviceSubnet: { subnetId: SUBNET } };
    assert.equal(
      loadRavenConfig({ file: file(base), env: { FLANNEL_NET: '172.16.0.0/16' } }).subnets.namespace.cidr,
      '172.16.0.0/16',
    );
    // Something else sets the range or a pool: FLANNEL_NET gives way.
    const env = { FLANNEL_NET: '172.16.0.0/16', RAVEN_NAMESPACE_CIDR: '192.168.0.0/16' };
    assert.equal(loadRavenConfig({ file: file(base), env }).subnets.namespace.cidr, '192.168.0.0/16');
    const pooled = loadRavenConfig({
      file: file({ ...base, subnets: { namespace: { subnetPoolId: POOL } } }),
      env: { FLANNEL_NET: '172.16.0.0/16' },
    });
    assert.deepEqual(pooled.subnets.namespace, {
      subnetPoolId: POOL,
      subnetPoolIds: [POOL],
      prefixLength: 24,
      ipv6PrefixLength: 64,
    });
    // Strategy shared: not used at all.
    const shared = loadRavenConfig({
      file: file({ ...base, subnets: { strategy: 'shared', shared: { subnetId: SUBNET } } }),
      env: { FLANNEL_NET: '172.16.0.0/16' },
    });
    assert.deepEqual(shared.subnets.namespace, { prefixLength: 24, ipv6PrefixLength: 64 });
    // A bad value is reported against it.
    assert.deepEqual(problems({ file: file(base), env: { FLANNEL_NET: '172.16.0.0/33' } }), [
      'FLANNEL_NET: "172.16.0.0/33" is not a valid CIDR',
    ]);
  });

  it('resolves kubernetes.inCluster from the environment unless set', () => {
    const inPod = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
    assert.equal(loadRavenConfig({ file: file(valid), env: inPod }).kubernetes.inCluster, true);
    assert.equal(
      loadRavenConfig({ file: file(valid), env: { ...inPod, KUBECONFIG: '/k' } }).kubernetes.inCluster,
      false,
    );
    assert.equal(
      loadRavenConfig({ file: file(valid), env: inPod, flags: { kubernetes: { kubeconfig: '/k' } } }).kubernetes
        .inCluster,
      false,
    );
    assert.equal(
      loadRavenConfig({ file: file({ ...valid, kubernetes: { inCluster: false } }), env: inPod }).kubernetes.inCluster,
      false,
    );
    assert.equal(
      loadRavenConfig({ file: file({ ...valid, kubernetes: { inCluster: true } }), env: {} }).kubernetes.inCluster,
      true,
    );
  });

  it('floatingIpNetworkId defaults to the router gateway network', () => {
    assert.equal(
      loadRavenConfig({ file: file({ ...valid, router: { externalNetworkId: EXT } }), env: {} }).floatingIpNetworkId,
      EXT,
    );
    assert.equal(
      loadRavenConfig({
        file: file({ ...valid, router: { externalNetworkId: EXT }, floatingIpNetworkId: POOL }),
        env: {},
      }).floatingIpNetworkId,
      POOL,
    );
  });

  it("router.create: Raven makes the router unless the pod subnet is an operator's existing one, or it is told", () => {
    const env = { RAVEN_CLUSTER_ID: 'c', RAVEN_SUBNET_STRATEGY: 'shared', RAVEN_SERVICE_SUBNET_ID: SUBNET };
    const load = (more: Record<string, string>) => loadRavenConfig({ env: { ...env, ...more } }).router.create;
    assert.equal(load({ RAVEN_POD_SUBNET_CIDR: '10.244.0.0/16' }), true);
    assert.equal(load({ RAVEN_POD_SUBNET_ID: POOL }), false, "an existing subnet is not attached to Raven's router");
    assert.equal(load({ RAVEN_POD_SUBNET_ID: POOL, RAVEN_ROUTER_CREATE: 'true' }), true);
    assert.equal(load({ RAVEN_POD_SUBNET_IDS: `${POOL},${EXT}` }), false, 'nor are existing dual-stack subnets');
    assert.equal(load({ RAVEN_POD_SUBNET_CIDR: '10.244.0.0/16', RAVEN_ROUTER_CREATE: 'false' }), false);
  });

  it('leader identity: the setting, else POD_NAME, else hostname_uuid', () => {
    assert.equal(
      loadRavenConfig({ file: file(valid), env: { POD_NAME: 'raven-abc', RAVEN_LEADER_IDENTITY: 'me' } }).leaderElection
        .identity,
      'me',
    );
    assert.equal(
      loadRavenConfig({ file: file(valid), env: { POD_NAME: 'raven-abc' } }).leaderElection.identity,
      'raven-abc',
    );
  });
});

describe('loadRavenConfig: problems name their source and field, all at once', () => {
  it('reports problems from the file, the environment and the flags together', () => {
    const path = file({
      clusterId: 'ok',
      subnets: { namespace: { cidr: '10.0.0.0/33' } },
      serviceSubnet: { cidr: '10.96.0.0/12' },
      workers: { pods: 2 },
    });
    assert.deepEqual(problems({ file: path, env: { RAVEN_CLUSTER_ID: 'Prod_1' }, flags: { workers: { pods: 0 } } }), [
      "RAVEN_CLUSTER_ID: must be 1–32 lower-case letters, digits or '-'",
      `${path}: subnets.namespace.cidr: "10.0.0.0/33" is not a valid CIDR`,
      '--workers-pods: must be an integer ≥ 1',
    ]);
  });

  it('the error message lists every problem', () => {
    const err = (() => {
      try {
        return loadRavenConfig({ env: { RAVEN_OPS_PORT: 'x' } });
      } catch (e) {
        return e as ConfigError;
      }
    })() as ConfigError;
    assert.match(
      err.message,
      /^4 configuration problems:\n {2}- clusterId: is required \(set it in the file, --cluster-id or RAVEN_CLUSTER_ID\)\n/,
    );
    assert.ok(err.message.includes('\n  - RAVEN_OPS_PORT: must be an integer from 0 to 65535'));
  });

  it('a file that cannot be read or parsed', () => {
    const missing = join(dir, 'nope.yaml');
    // The settings the file would have held are not reported as missing too; other sources' mistakes are.
    assert.deepEqual(problems({ file: missing, env: { RAVEN_WORKERS_PODS: '0' } }), [
      `${missing}: cannot read the config file (no such file)`,
      'RAVEN_WORKERS_PODS: must be an integer ≥ 1',
    ]);
    const bad = file('clusterId: [oops');
    assert.match(problems({ file: bad })[0]!, new RegExp(`^${bad}: not valid YAML: `));
    const list = file('- clusterId: c1\n');
    assert.deepEqual(problems({ file: list }), [`${list}: must be a mapping of settings (clusterId: …, subnets: …)`]);
  });

  it('names the variable or flag of a bad value given that way', () => {
    assert.deepEqual(problems({ file: file(valid), env: { RAVEN_SUBNET_STRATEGY: 'flat' } }), [
      'RAVEN_SUBNET_STRATEGY: must be one of shared, namespace',
    ]);
    assert.deepEqual(problems({ file: file(valid), env: { RAVEN_EMULATE_KUBE_PROXY: 'maybe' } }), [
      'RAVEN_EMULATE_KUBE_PROXY: must be true or false',
    ]);
    assert.deepEqual(problems({ file: file(valid), flags: { leaderElection: { enabled: false, namespace: 'Bad' } } }), [
      '--leader-elect-namespace: "Bad" must be a DNS label (lower-case letters, digits, \'-\', at most 63)',
    ]);
    assert.deepEqual(problems({ file: file(valid), flags: { gc: { graceSeconds: -1 } } }), [
      'flags: gc.graceSeconds: must be an integer ≥ 0',
    ]);
    assert.deepEqual(problems({ file: file(valid), env: { RAVEN_SECURITY_GROUPS: 'default' } }), [
      'RAVEN_SECURITY_GROUPS: "default" is not an OpenStack id (a UUID)',
    ]);
  });

  it('a rule between settings names every source involved', () => {
    const env = { RAVEN_CLUSTER_ID: 'c1', FLANNEL_NET: '10.0.0.0/8', RAVEN_SERVICE_SUBNET_CIDR: '10.96.0.0/12' };
    assert.deepEqual(problems({ env }), [
      'RAVEN_SERVICE_SUBNET_CIDR, FLANNEL_NET: serviceSubnet.cidr: "10.96.0.0/12" overlaps the pod range subnets.namespace.cidr "10.0.0.0/8"',
    ]);
    const shared = { RAVEN_CLUSTER_ID: 'c1', RAVEN_SERVICE_SUBNET_ID: SUBNET, RAVEN_SUBNET_STRATEGY: 'shared' };
    assert.match(
      problems({ env: shared })[0]!,
      /^RAVEN_SUBNET_STRATEGY: strategy "shared" needs subnets\.shared\.subnetId/,
    );
    assert.deepEqual(
      problems({ env: { ...shared, RAVEN_POD_SUBNET_ID: SUBNET, RAVEN_POD_SUBNET_CIDR: '10.1.0.0/16' } }),
      [
        'RAVEN_POD_SUBNET_CIDR, RAVEN_POD_SUBNET_ID: subnets.shared.cidr: cannot be combined with subnets.shared.subnetId: set only one',
      ],
    );
    const path = file({ ...valid, leaderElection: { leaseDurationSeconds: 10 } });
    assert.deepEqual(problems({ file: path, flags: { leaderElection: { renewDeadlineSeconds: 12 } } }), [
      `flags: leaderElection.renewDeadlineSeconds, ${path}: leaderElection.renewDeadlineSeconds: 12 must be less than leaderElection.leaseDurationSeconds (10)`,
    ]);
  });

  /** One bad setting in an otherwise valid file → the one problem reported. */
  const cases: Array<[string, RavenConfigInput | Record<string, unknown>, string]> = [
    [
      'missing cluster id',
      { clusterId: undefined },
      'clusterId: is required (set it in the file, --cluster-id or RAVEN_CLUSTER_ID)',
    ],
    ['cluster id charset', { clusterId: 'Prod' }, "@: clusterId: must be 1–32 lower-case letters, digits or '-'"],
    [
      'cluster id length',
      { clusterId: 'a'.repeat(33) },
      "@: clusterId: must be 1–32 lower-case letters, digits or '-'",
    ],
    ['cluster id dash', { clusterId: '-a' }, '@: clusterId: must start and end with a letter or digit'],
    ['cluster id type', { clusterId: 12 }, '@: clusterId: must be a string'],
    ['qps', { kubernetes: { qps: 0 } }, '@: kubernetes.qps: must be a number > 0'],
    ['burst', { kubernetes: { burst: 1.5 } }, '@: kubernetes.burst: must be an integer ≥ 1'],
    [
      'in-cluster and kubeconfig',
      { kubernetes: { inCluster: true, kubeconfig: '/k' } },
      '@: kubernetes.inCluster: cannot be combined with kubernetes.kubeconfig or kubernetes.context',
    ],
    ['empty string', { kubernetes: { context: '' } }, '@: kubernetes.context: must not be empty'],
    [
      'concurrency',
      { openstack: { concurrency: { loadBalancer: 0 } } },
      '@: openstack.concurrency.loadBalancer: must be an integer ≥ 1',
    ],
    ['timeout', { openstack: { timeoutMs: '5s' } }, '@: openstack.timeoutMs: must be an integer ≥ 1'],
    ['strategy', { subnets: { strategy: 'flat' } }, '@: subnets.strategy: must be one of shared, namespace'],
    [
      'shared: neither',
      { subnets: { strategy: 'shared' } },
      '@: subnets.shared: strategy "shared" needs subnets.shared.subnetId (an existing subnet; --pod-subnet-id; RAVEN_POD_SUBNET_ID), subnets.shared.subnetIds (existing subnets, one per IP family; --pod-subnet-ids; RAVEN_POD_SUBNET_IDS), subnets.shared.cidr (Raven creates the network and subnet; --pod-subnet-cidr; RAVEN_POD_SUBNET_CIDR) or subnets.shared.cidrs (one range per IP family: dual-stack; --pod-subnet-cidrs; RAVEN_POD_SUBNET_CIDRS)',
    ],
    [
      'shared: both',
      { subnets: { strategy: 'shared', shared: { subnetId: SUBNET, cidr: '10.1.0.0/16' } } },
      '@: subnets.shared.cidr: cannot be combined with subnets.shared.subnetId: set only one',
    ],
    [
      'shared: host bits',
      { subnets: { strategy: 'shared', shared: { cidr: '10.1.2.3/16' } } },
      '@: subnets.shared.cidr: "10.1.2.3/16" has host bits set; did you mean "10.1.0.0/16"?',
    ],
    [
      'shared: too small',
      { subnets: { strategy: 'shared', shared: { cidr: '10.1.0.0/31' } } },
      '@: subnets.shared.cidr: "10.1.0.0/31" is too small for a subnet (at most /30 for IPv4, /126 for IPv6)',
    ],
    [
      'shared: bad id',
      { subnets: { strategy: 'shared', shared: { subnetId: 'pods' } } },
      '@: subnets.shared.subnetId: "pods" is not an OpenStack id (a UUID)',
    ],
    [
      'namespace: neither',
      { subnets: { namespace: {} } },
      'subnets.namespace: strategy "namespace" needs subnets.namespace.subnetPoolId (a Neutron subnet pool; --namespace-subnet-pool; RAVEN_NAMESPACE_SUBNET_POOL), subnets.namespace.subnetPoolIds (one Neutron subnet pool per IP family; --namespace-subnet-pools; RAVEN_NAMESPACE_SUBNET_POOLS), subnets.namespace.cidr (a range to carve; --namespace-cidr; RAVEN_NAMESPACE_CIDR; FLANNEL_NET) or subnets.namespace.cidrs (one range per IP family: dual-stack; --namespace-cidrs; RAVEN_NAMESPACE_CIDRS)',
    ],
    [
      'namespace: both',
      { subnets: { namespace: { subnetPoolId: POOL, cidr: '10.0.0.0/16' } } },
      '@: subnets.namespace.cidr: cannot be combined with subnets.namespace.subnetPoolId: set only one',
    ],
    [
      'namespace: not a cidr',
      { subnets: { namespace: { cidr: '10.0.0.0' } } },
      '@: subnets.namespace.cidr: "10.0.0.0" is not a valid CIDR',
    ],
    [
      'namespace: prefix wider than the range',
      { subnets: { namespace: { cidr: '10.0.0.0/16', prefixLength: 8 } } },
      '@: subnets.namespace.prefixLength: 8 does not fit subnets.namespace.cidr "10.0.0.0/16": must be from 16 to 30',
    ],
    [
      'namespace: IPv6 prefix too long',
      { subnets: { namespace: { cidr: 'fd00::/48', ipv6PrefixLength: 127 } } },
      '@: subnets.namespace.ipv6PrefixLength: 127 does not fit subnets.namespace.cidr "fd00::/48": must be from 48 to 126',
    ],
    [
      'namespace: prefix range',
      { subnets: { namespace: { cidr: '10.0.0.0/16', prefixLength: 33 } } },
      '@: subnets.namespace.prefixLength: must be an integer from 1 to 32',
    ],
    [
      'namespace: prefix, pool',
      { subnets: { namespace: { subnetPoolId: POOL, prefixLength: 0 } } },
      '@: subnets.namespace.prefixLength: must be an integer from 1 to 32',
    ],
    [
      'namespace: dual-stack, one range per family',
      { subnets: { namespace: { cidrs: ['10.0.0.0/16', '10.1.0.0/16'] } } },
      '@: subnets.namespace.cidrs: "10.0.0.0/16" and "10.1.0.0/16" are both IPv4: give one range per IP family',
    ],
    [
      'namespace: dual-stack, at most two',
      { subnets: { namespace: { cidrs: ['10.0.0.0/16', 'fd00::/48', 'fd01::/48'] } } },
      '@: subnets.namespace.cidrs: holds 3 ranges: at most two, one IPv4 and one IPv6',
    ],
    [
      'namespace: dual-stack, empty',
      { subnets: { namespace: { cidrs: [] } } },
      '@: subnets.namespace.cidrs: must hold one range, or two: one per IP family',
    ],
    [
      'namespace: dual-stack, a bad range',
      { subnets: { namespace: { cidrs: ['10.0.0.0/16', 'fd00::1/48'] } } },
      '@: subnets.namespace.cidrs[1]: "fd00::1/48" has host bits set; did you mean "fd00::/48"?',
    ],
    [
      'namespace: dual-stack, the IPv6 prefix',
      { subnets: { namespace: { cidrs: ['10.0.0.0/16', 'fd00::/64'], ipv6PrefixLength: 56 } } },
      '@: subnets.namespace.ipv6PrefixLength: 56 does not fit subnets.namespace.cidrs "fd00::/64": must be from 64 to 126',
    ],
    [
      'namespace: cidr and cidrs',
      { subnets: { namespace: { cidr: '10.0.0.0/16', cidrs: ['10.0.0.0/16', 'fd00::/48'] } } },
      '@: subnets.namespace.cidrs: cannot be combined with subnets.namespace.cidr: set only one',
    ],
    [
      'shared: dual-stack subnets, at most two',
      { subnets: { strategy: 'shared', shared: { subnetIds: [SUBNET, POOL, EXT] } } },
      '@: subnets.shared.subnetIds: must list one or two subnets (one per IP family), not 3',
    ],
    [
      'shared: dual-stack subnets, the same twice',
      { subnets: { strategy: 'shared', shared: { subnetIds: [SUBNET, SUBNET] } } },
      '@: subnets.shared.subnetIds: lists the same subnet twice',
    ],
    [
      'shared: dual-stack subnets, not ids',
      { subnets: { strategy: 'shared', shared: { subnetIds: [SUBNET, 'v6'] } } },
      '@: subnets.shared.subnetIds[1]: "v6" is not an OpenStack id (a UUID)',
    ],
    [
      'namespace: dual-stack pools, the same twice',
      { subnets: { namespace: { subnetPoolIds: [POOL, POOL] } } },
      '@: subnets.namespace.subnetPoolIds: lists the same subnet pool twice',
    ],
    [
      'shared: subnetId and subnetIds',
      { subnets: { strategy: 'shared', shared: { subnetId: SUBNET, subnetIds: [SUBNET, POOL] } } },
      '@: subnets.shared.subnetIds: cannot be combined with subnets.shared.subnetId: set only one',
    ],
    [
      'shared: dual-stack, a range too small',
      { subnets: { strategy: 'shared', shared: { cidrs: ['10.1.0.0/16', 'fd00::/127'] } } },
      '@: subnets.shared.cidrs[1]: "fd00::/127" is too small for a subnet (at most /30 for IPv4, /126 for IPv6)',
    ],
    [
      'service subnet: dual-stack overlap with a pod range',
      {
        subnets: { namespace: { cidrs: ['10.0.0.0/16', 'fd00:10::/48'] } },
        serviceSubnet: { cidrs: ['10.96.0.0/12', 'fd00:10:0:96::/112'] },
      },
      '@: serviceSubnet.cidrs: "fd00:10:0:96::/112" overlaps the pod range subnets.namespace.cidrs "fd00:10::/48"',
    ],
    [
      'service subnet: neither',
      { serviceSubnet: {} },
      "serviceSubnet: translations.services needs serviceSubnet.subnetId (an existing subnet; --service-subnet-id; RAVEN_SERVICE_SUBNET_ID), serviceSubnet.subnetIds (existing subnets, one per IP family; --service-subnet-ids; RAVEN_SERVICE_SUBNET_IDS), serviceSubnet.cidr (Raven creates it; use the cluster's service CIDR; --service-subnet-cidr; RAVEN_SERVICE_SUBNET_CIDR) or serviceSubnet.cidrs (one per IP family: the cluster's service CIDRs; --service-subnet-cidrs; RAVEN_SERVICE_SUBNET_CIDRS)",
    ],
    [
      'service subnet: overlap',
      { serviceSubnet: { cidr: '10.0.128.0/20' } },
      '@: serviceSubnet.cidr: "10.0.128.0/20" overlaps the pod range subnets.namespace.cidr "10.0.0.0/16"',
    ],
    ['router id', { router: { id: 'r1' } }, '@: router.id: "r1" is not an OpenStack id (a UUID)'],
    ['security groups type', { securityGroups: 'default' }, '@: securityGroups: must be a list of security group ids'],
    [
      'security group id',
      { securityGroups: [SUBNET, 'web'] },
      '@: securityGroups[1]: "web" is not an OpenStack id (a UUID)',
    ],
    ['boolean', { emulateKubeProxy: 'yes' }, '@: emulateKubeProxy: must be true or false'],
    [
      'no translations',
      { translations: { namespaces: false, pods: false, services: false } },
      '@: translations: at least one of namespaces, pods and services must be on',
    ],
    [
      'pods need namespaces',
      { translations: { namespaces: false } },
      '@: translations.namespaces: must be on when translations.pods is on with strategy "namespace" (pods get ports on their namespace\'s subnet)',
    ],
    ['resync', { resyncPeriodSeconds: -1 }, '@: resyncPeriodSeconds: must be an integer ≥ 0'],
    ['workers', { workers: { namespaces: 0 } }, '@: workers.namespaces: must be an integer ≥ 1'],
    ['gc', { gc: { intervalSeconds: 0 } }, '@: gc.intervalSeconds: must be an integer ≥ 1'],
    ['lb', { loadBalancer: { pendingRequeueMs: 0 } }, '@: loadBalancer.pendingRequeueMs: must be an integer ≥ 1'],
    [
      'lease name',
      { leaderElection: { name: 'Raven!' } },
      "@: leaderElection.name: \"Raven!\" must be a DNS subdomain (lower-case letters, digits, '-', '.')",
    ],
    [
      'renew ≥ lease',
      { leaderElection: { leaseDurationSeconds: 10 } },
      '@: leaderElection.renewDeadlineSeconds: 10 must be less than leaderElection.leaseDurationSeconds (10)',
    ],
    [
      'retry too long',
      { leaderElection: { retryPeriodSeconds: 9 } },
      '@: leaderElection.retryPeriodSeconds: 9 is too long: leaderElection.renewDeadlineSeconds (10) must be more than 1.2 × it',
    ],
    [
      'lease seconds',
      { leaderElection: { leaseDurationSeconds: -1 } },
      '@: leaderElection.leaseDurationSeconds: must be a number > 0',
    ],
    ['ops port', { ops: { port: 70000 } }, '@: ops.port: must be an integer from 0 to 65535'],
    [
      'log level',
      { logLevel: 'verbose' },
      '@: logLevel: must be one of trace, debug, info, warn, error, fatal, silent',
    ],
    ['unknown top-level, same letters', { clusterID: 'x' }, '@: clusterID: unknown setting; did you mean "clusterId"?'],
    [
      'unknown top-level, typo',
      { emulateKubeProxi: true },
      '@: emulateKubeProxi: unknown setting; did you mean "emulateKubeProxy"?',
    ],
    ['unknown top-level', { nodes: 3 }, '@: nodes: unknown setting'],
    ['unknown nested, typo', { workers: { pod: 3 } }, '@: workers.pod: unknown setting; did you mean "pods"?'],
    [
      'unknown nested',
      { workers: { nodes: 3 } },
      '@: workers.nodes: unknown setting (known here: namespaces, pods, services)',
    ],
    ['object expected', { workers: 3 }, '@: workers: must be a mapping of settings'],
  ];
  for (const [name, override, expected] of cases) {
    it(name, () => {
      const content: Record<string, unknown> = { ...valid, ...override };
      for (const [k, v] of Object.entries(override)) if (v === undefined) delete content[k];
      const path = file(content);
      const got = problems({ file: path });
      assert.deepEqual(got, [expected.replace(/^@/, path)]);
    });
  }

  it('dual-stack ranges from the file, the environment and flags: cidr is the primary one', () => {
    const config = loadRavenConfig({
      file: file({ ...valid, subnets: { strategy: 'shared', shared: { cidr: '10.1.0.0/16' } } }),
      env: {
        RAVEN_POD_SUBNET_CIDRS: 'fd00:10::/64, 10.1.0.0/16',
        RAVEN_SERVICE_SUBNET_CIDRS: '10.96.0.0/16,fd00:96::/112',
      },
    });
    assert.deepEqual(config.subnets.shared, { cidr: 'fd00:10::/64', cidrs: ['fd00:10::/64', '10.1.0.0/16'] });
    assert.deepEqual(config.serviceSubnet, { cidr: '10.96.0.0/16', cidrs: ['10.96.0.0/16', 'fd00:96::/112'] });
    const single = loadRavenConfig({
      file: file(valid),
      env: {},
      flags: { subnets: { strategy: 'shared', shared: { cidr: 'fd00:10::/64' } } },
    });
    assert.deepEqual(single.subnets.shared, { cidr: 'fd00:10::/64', cidrs: ['fd00:10::/64'] });
  });

  it('dual-stack existing subnets from the environment: subnetId is the primary one', () => {
    const config = loadRavenConfig({
      env: {
        RAVEN_CLUSTER_ID: 'c',
        RAVEN_SUBNET_STRATEGY: 'shared',
        RAVEN_POD_SUBNET_IDS: `${POOL}, ${EXT}`,
        RAVEN_SERVICE_SUBNET_IDS: SUBNET,
      },
    });
    assert.deepEqual(config.subnets.shared, { subnetId: POOL, subnetIds: [POOL, EXT] });
    assert.deepEqual(config.serviceSubnet, { subnetId: SUBNET, subnetIds: [SUBNET] });
  });

  it('services off: no service subnet needed', () => {
    assert.deepEqual(
      loadRavenConfig({ file: file({ ...valid, serviceSubnet: {}, translations: { services: false } }), env: {} })
        .serviceSubnet,
      {},
    );
  });

  it('raven gc is not asked for the ranges Raven would create: only the shared strategy says which subnet', () => {
    // What a user types to point gc at a cluster: its id, and where the cluster and the cloud are.
    const bare = { clusterId: 'prod-1' };
    assert.equal(problems({ flags: bare }).length, 2);
    const config = loadRavenConfig({ flags: bare, env: {}, purpose: 'gc' });
    assert.deepEqual([config.subnets.strategy, config.serviceSubnet], ['namespace', {}]);
    // Shared: an operator's subnet carries none of Raven's tags; gc knows its pool ports by its id.
    const shared = problems({ flags: { ...bare, subnets: { strategy: 'shared' } }, purpose: 'gc' });
    assert.equal(shared.length, 1);
    assert.match(shared[0]!, /strategy "shared" needs subnets\.shared\.subnetId/);
    // What gc is given is still checked: two alternatives at once.
    const both = { ...bare, subnets: { namespace: { cidr: '10.0.0.0/16', subnetPoolId: POOL } } };
    assert.equal(problems({ flags: both, purpose: 'gc' }).length, 1);
  });
});
