// The `raven` command as a user runs it: version, help, and bad input that must end the process with a clear error.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';

const run = promisify(execFile);
const bin = new URL('../../bin/raven.js', import.meta.url).pathname;

async function raven(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], { timeout: 20_000 });
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
});
