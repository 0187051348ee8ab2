import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from '../../../test/support/node-test.ts';
import { parse } from 'yaml';
import type { Logger } from '../../../src/core/index.ts';
import { runOpenStackSim } from './run-openstack-sim.ts';

interface Clouds {
  clouds: Record<
    string,
    {
      auth_type: string;
      auth?: Record<string, string>;
      region_name: string;
      interface?: string;
      network_endpoint_override?: string;
      load_balancer_endpoint_override?: string;
      load_balancer_project_id?: string;
    }
  >;
}

/** A logger that keeps every line, to prove what is (not) logged. */
function recordingLogger(lines: string[]): Logger {
  const log = (obj: object, msg?: string) => lines.push(`${msg ?? ''} ${JSON.stringify(obj)}`);
  const logger: Logger = { debug: log, info: log, warn: log, error: log, child: () => logger };
  return logger;
}

describe('runOpenStackSim', () => {
  it('writes a 0600 clouds.yaml whose password cloud authenticates against the sim, and never logs the password', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raven-sim-test-'));
    const file = join(dir, 'sub', 'clouds.yaml');
    const lines: string[] = [];
    const sim = await runOpenStackSim({
      port: 0,
      auth: 'keystone',
      cloudsYamlOut: file,
      logger: recordingLogger(lines),
    });
    try {
      assert.match(sim.url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal((await stat(file)).mode & 0o777, 0o600);
      const text = await readFile(file, 'utf8');
      assert.equal(text, sim.cloudsYaml);
      const cloud = (parse(text) as Clouds).clouds['raven-sim']!;
      assert.deepEqual(cloud.auth, {
        auth_url: sim.keystoneUrl,
        username: 'admin',
        password: sim.adminPassword,
        project_name: 'admin',
        user_domain_name: 'Default',
        project_domain_name: 'Default',
      });
      assert.deepEqual([cloud.auth_type, cloud.region_name, cloud.interface], ['password', 'RegionOne', 'public']);
      assert.equal((parse(text) as Clouds).clouds['raven-sim-noauth'], undefined);
      const a = cloud.auth;
      const res = await fetch(`${a.auth_url}/auth/tokens`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          auth: {
            identity: {
              methods: ['password'],
              password: { user: { name: a.username, domain: { name: a.user_domain_name }, password: a.password } },
            },
            scope: { project: { name: a.project_name, domain: { name: a.project_domain_name } } },
          },
        }),
      });
      assert.equal(res.status, 201);
      const networks = await fetch(`${sim.neutronUrl}/v2.0/networks`, {
        headers: { 'x-auth-token': res.headers.get('x-subject-token')! },
      });
      assert.equal(networks.status, 200);
      assert.ok(lines.length > 0);
      assert.ok(lines.every((l) => !l.includes(sim.adminPassword)));
    } finally {
      await sim.close();
    }
    await assert.rejects(fetch(`${sim.neutronUrl}/`), 'the port is closed');
  });

  it('in noauth mode writes the endpoint-override cloud with the project Octavia needs', async () => {
    const sim = await runOpenStackSim({ auth: 'noauth' });
    try {
      const cloud = (parse(sim.cloudsYaml) as Clouds).clouds['raven-sim-noauth']!;
      assert.deepEqual(cloud, {
        auth_type: 'none',
        network_endpoint_override: sim.neutronUrl,
        load_balancer_endpoint_override: sim.octaviaUrl,
        load_balancer_project_id: 'fake_project_id',
        region_name: 'RegionOne',
      });
      const res = await fetch(`${cloud.network_endpoint_override}/v2.0/networks`);
      assert.equal(res.status, 200);
    } finally {
      await sim.close();
    }
  });
});

describe('raven sim openstack', () => {
  it('prints how to use it, serves until SIGTERM, then exits 0', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'raven-sim-cli-'));
    const file = join(dir, 'clouds.yaml');
    const bin = new URL('../../../bin/raven.js', import.meta.url).pathname;
    const child = spawn(
      process.execPath,
      [bin, 'sim', 'openstack', '--port', '0', '--auth', 'noauth', '--clouds-yaml-out', file, '--log-level', 'error'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no banner: ${out}`)), 20_000);
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('Press Ctrl-C')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      assert.match(out, new RegExp(`OS_CLIENT_CONFIG_FILE=${file} OS_CLOUD=raven-sim-noauth openstack network list`));
      const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
      assert.ok(url);
      assert.equal((await fetch(`${url}/network/v2.0/networks`)).status, 200);
    } finally {
      child.kill('SIGTERM');
    }
    assert.equal(await exited, 0);
  });
});
