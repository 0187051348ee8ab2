import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { Command } from 'commander';
import { addConfigFlags, configFields, configFromFlags, loadRavenConfig } from './index.ts';

const SUBNET = '11111111-2222-4333-8444-555555555555';

/** Parses `args` with a `run` command carrying the config flags; returns its option values. */
function parse(args: string[]): Record<string, unknown> {
  let seen: Record<string, unknown> = {};
  const program = new Command('raven').exitOverride();
  addConfigFlags(program.command('run')).action((opts: Record<string, unknown>) => {
    seen = opts;
  });
  program.parse(['node', 'raven', 'run', ...args]);
  return seen;
}

describe('addConfigFlags / configFromFlags', () => {
  it('registers --config and one flag per setting that has one (plus --no- twins)', () => {
    const command = addConfigFlags(new Command('run'));
    const longs = command.options.map((o) => o.long);
    assert.ok(longs.includes('--config'));
    for (const field of configFields.filter((f) => f.flag))
      assert.ok(longs.includes(field.flag!.split(' ')[0]), field.path);
    for (const name of [
      '--cluster-id',
      '--kubeconfig',
      '--context',
      '--os-cloud',
      '--subnet-strategy',
      '--pod-subnet-cidr',
      '--pod-subnet-id',
      '--namespace-subnet-pool',
      '--namespace-cidr',
      '--service-subnet-cidr',
      '--service-subnet-id',
      '--router-id',
      '--external-network-id',
      '--emulate-kube-proxy',
      '--workers-pods',
      '--ops-port',
      '--no-leader-elect',
    ])
      assert.ok(longs.includes(name), name);
  });

  it('a flag\'s help keeps its example: the sentence does not end at "e.g."', () => {
    const command = addConfigFlags(new Command('run'));
    const help = (long: string) => command.options.find((o) => o.long === long)?.description ?? '';
    assert.match(help('--pod-subnet-cidrs'), /e\.g\. 10\.244\.0\.0\/16,fd00:10:244::\/64 \[/);
    assert.match(help('--namespace-cidrs'), /e\.g\. 10\.244\.0\.0\/16,fd00:10:244::\/56 \[/);
  });

  it('groups the help, most used first, each flag under one heading', () => {
    const text = addConfigFlags(new Command('run')).helpInformation();
    const headings = [...text.matchAll(/^(\S.*):$/gm)].map((m) => m[1]);
    assert.deepEqual(headings.slice(0, 3), ['Cluster and clouds', 'Pod subnets', 'Service subnet']);
    assert.ok(!headings.includes('Other settings'), 'every setting has a group');
    const under = (flag: string) => headings.findLast((h) => text.indexOf(`${h}:\n`) < text.indexOf(`  ${flag} `));
    assert.equal(under('--cluster-id'), 'Cluster and clouds');
    assert.equal(under('--config'), 'Cluster and clouds');
    assert.equal(under('--service-subnet-cidrs'), 'Service subnet');
    assert.equal(under('--kube-api-qps'), 'Tuning');
    assert.equal(under('--no-leader-elect'), 'Leader election, ops server and logs');
  });

  it('no flag has a default: nothing given, nothing set', () => {
    assert.deepEqual(configFromFlags(parse([])), {});
  });

  it('maps flags to settings, converting their values', () => {
    const opts = parse([
      '--cluster-id',
      'c1',
      '--subnet-strategy',
      'shared',
      '--pod-subnet-id',
      SUBNET,
      '--service-subnet-cidr',
      '10.96.0.0/12',
      '--workers-pods',
      '16',
      '--kube-api-qps',
      '7.5',
      '--emulate-kube-proxy',
      '--no-leader-elect',
      '--security-groups',
      `${SUBNET},${SUBNET}`,
      '--ops-port',
      '0',
      '--os-cloud',
      'prod',
      '--config',
      '/etc/raven/raven.yaml',
    ]);
    assert.equal(opts.config, '/etc/raven/raven.yaml');
    assert.deepEqual(configFromFlags(opts), {
      clusterId: 'c1',
      subnets: { strategy: 'shared', shared: { subnetId: SUBNET } },
      serviceSubnet: { cidr: '10.96.0.0/12' },
      workers: { pods: 16 },
      kubernetes: { qps: 7.5 },
      emulateKubeProxy: true,
      leaderElection: { enabled: false },
      securityGroups: [SUBNET, SUBNET],
      ops: { port: 0 },
      openstack: { cloud: 'prod' },
    });
  });

  it('--leader-elect and --no-emulate-kube-proxy set the other way', () => {
    assert.deepEqual(configFromFlags(parse(['--leader-elect', '--no-emulate-kube-proxy'])), {
      leaderElection: { enabled: true },
      emulateKubeProxy: false,
    });
  });

  it('bad values are reported by loadRavenConfig against the flag, with every other problem', () => {
    const flags = configFromFlags(
      parse([
        '--cluster-id',
        'c1',
        '--namespace-cidr',
        '10.0.0.0/16',
        '--service-subnet-id',
        SUBNET,
        '--workers-pods',
        'many',
        '--ops-port',
        '-1',
        '--no-leader-elect',
        '--leader-elect-namespace',
        'Kube_System',
      ]),
    );
    try {
      loadRavenConfig({ env: {}, flags });
      assert.fail('expected a ConfigError');
    } catch (err) {
      assert.deepEqual((err as { problems: string[] }).problems, [
        '--workers-pods: must be an integer ≥ 1',
        '--leader-elect-namespace: "Kube_System" must be a DNS label (lower-case letters, digits, \'-\', at most 63)',
        '--ops-port: must be an integer from 0 to 65535',
      ]);
    }
  });

  it('flags beat the environment and the file', () => {
    const env = {
      RAVEN_CLUSTER_ID: 'from-env',
      FLANNEL_NET: '10.0.0.0/16',
      RAVEN_SERVICE_SUBNET_ID: SUBNET,
      RAVEN_OPS_PORT: '1',
    };
    const config = loadRavenConfig({
      env,
      flags: configFromFlags(parse(['--cluster-id', 'from-flag', '--ops-port', '2'])),
    });
    assert.equal(config.clusterId, 'from-flag');
    assert.equal(config.ops.port, 2);
  });
});
