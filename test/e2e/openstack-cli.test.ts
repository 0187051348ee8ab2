// Debian's `openstack` CLI (python-openstackclient 6.0 + the Octavia plugin, i.e. openstacksdk and keystoneauth)
// against the OpenStack simulator: a real third-party client reading the clouds.yaml the simulator writes.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from '../support/node-test.ts';
import { runOpenStackSim, type RunningOpenStackSim } from '@raven/dev';
import { loadCloudConfig, NeutronClient, OctaviaClient, OpenStackSession } from '../../src/openstack/index.ts';
import { noauthProjectId } from '@raven/openstack-sim';
import { cleanEnv, spawnRaven, type RavenChild } from '../support/raven-cli.ts';
import { waitFor } from '../support/wait.ts';

const run = promisify(execFile);

/** Installed by scripts/test-deps.sh as root (always under CI); elsewhere the suite is skipped with a note. */
function openstackCliMissing(): string | false {
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import openstackclient, octaviaclient'], { stdio: 'ignore' });
    return false;
  } catch {
    if (process.env.CI)
      throw new Error('the openstack CLI is not installed under CI; scripts/test-deps.sh should have installed it');
    return 'python3-openstackclient / python3-octaviaclient are not installed (sudo apt-get install python3-openstackclient python3-octaviaclient)';
  }
}

describe('the openstack CLI against the OpenStack simulator', { skip: openstackCliMissing(), timeout: 120_000 }, () => {
  let sim: RunningOpenStackSim;
  let dir: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'raven-osc-'));
    sim = await runOpenStackSim({
      port: 0,
      auth: 'keystone',
      provisioningDelayMs: 200,
      cloudsYamlOut: join(dir, 'clouds.yaml'),
    });
  });
  after(async () => {
    await sim.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs `openstack <args>` with the simulator's clouds.yaml. */
  async function cli(...args: string[]): Promise<string> {
    const env = {
      PATH: '/usr/bin:/bin',
      HOME: dir,
      OS_CLIENT_CONFIG_FILE: join(dir, 'clouds.yaml'),
      OS_CLOUD: 'raven-sim',
    };
    return (await run('/usr/bin/openstack', args, { env, timeout: 30_000 })).stdout;
  }
  const openstack = async <T = Record<string, unknown>>(...args: string[]): Promise<T> =>
    JSON.parse(await cli(...args, '-f', 'json')) as T;

  /** Polls `check` every 100 ms, at most 50 times (a test may wait; Raven's clients never do). */
  async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 50; i++) {
      if (await check()) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.fail(`timed out waiting for ${what}`);
  }
  const lbActive = async () => (await openstack('loadbalancer', 'show', 'cli-lb')).provisioning_status === 'ACTIVE';

  it('authenticates with Keystone from clouds.yaml and manages networks, subnets and tagged ports', async () => {
    const net = await openstack('network', 'create', 'cli-net');
    assert.equal(net.name, 'cli-net');
    assert.equal(net.status, 'ACTIVE');
    const subnet = await openstack(
      'subnet',
      'create',
      '--network',
      'cli-net',
      '--subnet-range',
      '10.42.0.0/24',
      'cli-sub',
    );
    assert.equal(subnet.cidr, '10.42.0.0/24');
    assert.equal(subnet.gateway_ip, '10.42.0.1');
    // The CLI creates the port, then sets its tags (Zed has no tags on create).
    const port = await openstack(
      'port',
      'create',
      '--network',
      'cli-net',
      '--device-owner',
      'compute:kuryr',
      '--tag',
      'k8s-ns=default',
      'cli-port',
    );
    const [ip] = port.fixed_ips as { ip_address: string; subnet_id: string }[];
    assert.equal(ip?.subnet_id, subnet.id);
    assert.match(ip?.ip_address ?? '', /^10\.42\.0\.(\d+)$/);
    const tagged = await openstack<{ Name: string; 'Fixed IP Addresses': unknown }[]>(
      'port',
      'list',
      '--tags',
      'k8s-ns=default',
    );
    assert.deepEqual(
      tagged.map((p) => p.Name),
      ['cli-port'],
    );
    const shown = await openstack('port', 'show', 'cli-port');
    assert.deepEqual(shown.tags, ['k8s-ns=default']);
  });

  it('creates an Octavia load balancer that goes PENDING_CREATE → ACTIVE, and cascade-deletes it', async () => {
    const lb = await openstack('loadbalancer', 'create', '--name', 'cli-lb', '--vip-subnet-id', 'cli-sub');
    assert.equal(lb.provisioning_status, 'PENDING_CREATE');
    await eventually('the load balancer to be ACTIVE', lbActive);
    const listener = await openstack(
      'loadbalancer',
      'listener',
      'create',
      '--name',
      'cli-http',
      '--protocol',
      'HTTP',
      '--protocol-port',
      '80',
      'cli-lb',
    );
    assert.equal(listener.protocol_port, 80);
    await eventually('the listener to be ACTIVE', lbActive);
    await cli('loadbalancer', 'delete', '--cascade', 'cli-lb');
    await eventually(
      'the load balancer to be gone',
      async () => !(await openstack<{ name: string }[]>('loadbalancer', 'list')).some((l) => l.name === 'cli-lb'),
    );
  });
});

describe(
  'the openstack CLI against `raven sim openstack --auth noauth` (its banner and its clouds.yaml)',
  { skip: openstackCliMissing(), timeout: 120_000 },
  () => {
    let dir: string;
    let child: RavenChild | undefined;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'raven-osc-noauth-'));
      const file = join(dir, 'clouds.yaml');
      const args = ['sim', 'openstack', '--port', '0', '--auth', 'noauth', '--clouds-yaml-out', file];
      child = spawnRaven([...args, '--log-level', 'error'], { cwd: dir, env: cleanEnv() });
      await waitFor('the banner', () => child!.stdout.includes('Press Ctrl-C'), { timeoutMs: 20_000 });
    });
    after(() => {
      child?.proc.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    });

    /** Runs a command line of the form `VAR=value … openstack args…` as a shell would, with only PATH and HOME. */
    async function shell(line: string): Promise<string> {
      const words = line.trim().split(/\s+/);
      const env: NodeJS.ProcessEnv = { PATH: '/usr/bin:/bin', HOME: dir };
      while (/^[A-Z_]+=/.test(words[0] ?? '')) {
        const [name, ...value] = words.shift()!.split('=');
        env[name!] = value.join('=');
      }
      assert.equal(words.shift(), 'openstack');
      return (await run('/usr/bin/openstack', words, { env, timeout: 30_000 })).stdout;
    }

    it('the command the banner prints works, and so do networks and load balancers', async () => {
      const tryLine = /try:\s+(.*openstack network list)$/m.exec(child!.stdout)?.[1];
      assert.ok(tryLine, child!.stdout);
      await shell(tryLine);
      const prefix = tryLine.replace(/openstack network list$/, 'openstack');
      const json = async <T>(args: string) => JSON.parse(await shell(`${prefix} ${args} -f json`)) as T;
      const net = await json<{ id: string; project_id: string }>('network create osc-noauth-net');
      assert.equal(net.project_id, noauthProjectId, 'noauth Neutron puts it in its default project');
      const subnet = await json<{ id: string }>(
        'subnet create --network osc-noauth-net --subnet-range 10.43.0.0/24 osc-noauth-sub',
      );
      assert.deepEqual(await json('loadbalancer list'), []);

      // Raven reads the same clouds.yaml: its Octavia calls carry the project (X-Project-Id) without being told, and
      // the CLI lists and shows what it made. (The CLI cannot create one here: octaviaclient resolves the subnet
      // through the legacy neutronclient, which ignores network_endpoint_override under auth_type none.)
      const file = /OS_CLIENT_CONFIG_FILE=(\S+)/.exec(tryLine)![1]!;
      const session = new OpenStackSession({
        cloud: loadCloudConfig({ cloud: 'raven-sim-noauth', env: { OS_CLIENT_CONFIG_FILE: file } }),
      });
      try {
        const octavia = new OctaviaClient(session);
        const mine = await octavia.loadBalancers.create({ name: 'raven-noauth-lb', vip_subnet_id: subnet.id });
        assert.equal(mine.project_id, noauthProjectId);
        const listed = await json<{ id: string; name: string; project_id: string }[]>('loadbalancer list');
        assert.deepEqual(
          listed.map((l) => [l.id, l.name, l.project_id]),
          [[mine.id, 'raven-noauth-lb', noauthProjectId]],
        );
        const shown = await json<{ vip_subnet_id: string }>(`loadbalancer show ${mine.id}`);
        assert.equal(shown.vip_subnet_id, subnet.id);
        assert.deepEqual(
          (await new NeutronClient(session).networks.list({ name: 'osc-noauth-net' })).map((n) => n.id),
          [net.id],
        );
      } finally {
        await session.close();
      }
    });
  },
);
