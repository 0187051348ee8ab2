// The `raven` command as a user runs it: version, help, and bad input that must end the process with a clear error.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from '../support/node-test.ts';
import { promisify } from 'node:util';
import { cleanEnv, ravenBin } from '../support/raven-cli.ts';

const run = promisify(execFile);

async function raven(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [ravenBin, ...args], { timeout: 20_000, ...options });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string; killed?: boolean };
    assert.equal(e.killed, false, 'raven must exit by itself, not be killed by the timeout');
    return { code: e.code ?? -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

describe('raven CLI', () => {
  it('prints its version and help', async () => {
    const version = await raven(['--version']);
    assert.match(version.stdout.trim(), /^\d+\.\d+\.\d+$/);
    const help = await raven(['apiserver', '--help']);
    assert.match(help.stdout, /--kubeconfig-out <path>/);
  });

  it('exits 2 with a one-line error on a bad service CIDR or node-port range, without hanging', async () => {
    const cidr = await raven([
      'apiserver',
      '--port',
      '0',
      '--service-cidr',
      '10.0.0.0/33',
      '--kubeconfig-out',
      '/dev/null',
    ]);
    assert.equal(cidr.code, 2);
    assert.match(cidr.stderr, /raven: error \[CIDR_INVALID\]: service CIDR "10\.0\.0\.0\/33" is not a valid CIDR/);
    const ports = await raven([
      'apiserver',
      '--port',
      '0',
      '--node-port-range',
      '5-1',
      '--kubeconfig-out',
      '/dev/null',
    ]);
    assert.equal(ports.code, 2);
    assert.match(ports.stderr, /PORT_RANGE_INVALID/);
  });

  it('rejects a malformed flag value before starting', async () => {
    const bad = await raven(['apiserver', '--port', 'abc']);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /--port <port>.*must be an integer from 0 to 65535/);
  });

  it('a taken port: exit 2 and one line that names the address and the flag that picks a free port', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = String((taken.address() as AddressInfo).port);
    const dir = await mkdtemp(join(tmpdir(), 'raven-cli-port-'));
    // No real cloud, no configuration from the environment: `raven dev` runs its simulator.
    const env = cleanEnv();
    try {
      const cases: [string[], string][] = [
        [['apiserver', '--port', port, '--kubeconfig-out', join(dir, 'kubeconfig')], '--port'],
        [['sim', 'openstack', '--port', port, '--clouds-yaml-out', join(dir, 'clouds.yaml')], '--port'],
        [['dev', '--api-port', port, '--log-level', 'silent'], '--api-port'],
        [['dev', '--api-port', '0', '--ops-port', port, '--log-level', 'silent'], '--ops-port'],
      ];
      for (const [args, flag] of cases) {
        const result = await raven(args, { cwd: dir, env });
        assert.equal(result.code, 2, `raven ${args.join(' ')}: ${result.stderr}`);
        assert.equal(
          result.stderr,
          `raven: error [ADDRESS_IN_USE]: 127.0.0.1:${port} is already in use (another raven, or another server, listens there): stop it, or use ${flag} 0 for any free port\n`,
          `raven ${args.join(' ')}`,
        );
      }
    } finally {
      taken.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
