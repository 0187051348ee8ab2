import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from '../../../test/support/node-test.ts';
import { configFields, configReference, describeConfig, loadRavenConfig } from './index.ts';
import { knownKeysAt } from './schema.ts';

const SUBNET = '11111111-2222-4333-8444-555555555555';
const EXT = '33333333-2222-4333-8444-555555555555';

/** Every leaf setting of the schema, dotted. */
function schemaLeaves(path: string[] = []): string[] {
  const keys = knownKeysAt(path);
  if (!keys || path.at(-1) === 'securityGroups') return [path.join('.')];
  return keys.flatMap((key) => schemaLeaves([...path, key]));
}

describe('describeConfig', () => {
  it('says what Raven will do, one line per subject', () => {
    const config = loadRavenConfig({
      env: {
        RAVEN_CLUSTER_ID: 'c1',
        FLANNEL_NET: '172.16.0.0/16',
        RAVEN_SERVICE_SUBNET_CIDR: '10.96.0.0/12',
        RAVEN_EXTERNAL_NETWORK_ID: EXT,
        POD_NAME: 'raven-0',
      },
    });
    assert.deepEqual(describeConfig(config), {
      clusterId: 'c1',
      kubernetes: 'default kubeconfig (KUBECONFIG, ~/.kube/config)',
      kubeApiRate: '50 qps, burst 100',
      openstack: 'OS_CLOUD / OS_* variables; concurrency network 8, load-balancer 8; timeout 60000 ms',
      subnets: 'per namespace: /24 carved from 172.16.0.0/16',
      serviceSubnet: 'created with 10.96.0.0/12',
      router: `created, gateway on ${EXT}`,
      floatingIpNetwork: EXT,
      securityGroups: "the project's default",
      emulateKubeProxy: false,
      translations: 'namespaces, pods, services, networkPolicies',
      workers: 'namespaces 2, pods 8, services 4',
      resyncPeriodSeconds: 600,
      gc: 'every 300 s, grace 120 s',
      leaderElection: 'lease kube-system/raven as raven-0 (15/10/2 s)',
      ops: '127.0.0.1:9090',
      logLevel: 'info',
    });
  });

  it('shared subnets, existing router, in-cluster, no leader election', () => {
    const config = loadRavenConfig({
      env: { KUBERNETES_SERVICE_HOST: '10.96.0.1' },
      flags: {
        clusterId: 'c2',
        subnets: { strategy: 'shared', shared: { subnetId: SUBNET } },
        serviceSubnet: { subnetId: SUBNET },
        router: { id: SUBNET },
        leaderElection: { enabled: false },
        securityGroups: [SUBNET],
        openstack: { cloud: 'prod' },
        ops: { host: '::', port: 9091 },
      },
    });
    const d = describeConfig(config);
    assert.equal(d.kubernetes, 'in-cluster service account');
    assert.equal(d.subnets, `shared: existing subnet ${SUBNET}`);
    assert.equal(d.router, `existing ${SUBNET}`);
    assert.equal(d.floatingIpNetwork, 'none (no floating IPs)');
    assert.equal(d.leaderElection, 'off (single replica)');
    assert.equal(d.securityGroups, SUBNET);
    assert.equal(d.ops, '[::]:9091');
    assert.match(String(d.openstack), /^cloud prod;/);
  });
});

describe('the settings table', () => {
  it('has one row per setting of the schema, and no other', () => {
    assert.deepEqual(configFields.map((f) => f.path).sort(), schemaLeaves().sort());
  });

  it('environment variables and flags are unique', () => {
    const envs = configFields.flatMap((f) => (f.env ? [f.env] : []));
    const flags = configFields.flatMap((f) => (f.flag ? [f.flag.split(' ')[0]!] : []));
    assert.equal(new Set(envs).size, envs.length);
    assert.equal(new Set(flags).size, flags.length);
    for (const env of envs) assert.match(env, /^RAVEN_[A-Z0-9_]+$/);
  });

  it('README.md holds the generated reference (regenerate it when a setting changes)', () => {
    const readme = readFileSync(new URL('README.md', import.meta.url), 'utf8');
    assert.ok(
      readme.includes(`${configReference()}\n<!-- end of generated table -->`),
      'src/daemon/config/README.md is out of date: see the command in it',
    );
  });
});
