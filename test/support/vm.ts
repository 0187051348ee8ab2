/**
 * A real VM for the nested-pod test: `scripts/dataplane/vm.sh boot` (qemu, software emulation, Debian's kernel with
 * 8021q) with its NIC a tap device and a command agent on a virtio-serial port. Commands run in the guest as bash
 * scripts, one at a time: the agent reads one line (the script in base64) and answers one line (the output in
 * base64, a space, the exit code). The image is built by `vm.sh build` into `RAVEN_VM_DIR` (default `.raven/vm`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { waitFor } from './wait.ts';

const VM_SCRIPT = resolve(import.meta.dirname, '../../scripts/dataplane/vm.sh');

export const vmDir = (): string => resolve(process.env.RAVEN_VM_DIR ?? '.raven/vm');

/** Why no VM can boot here, or false. */
export function vmSkipReason(): string | false {
  if (process.getuid?.() !== 0) return 'needs root (a tap device, network namespaces)';
  if (!existsSync('/usr/bin/qemu-system-x86_64')) return 'needs qemu (bash scripts/dataplane/vm.sh install)';
  if (!existsSync(join(vmDir(), 'built'))) return `no VM image in ${vmDir()} (bash scripts/dataplane/vm.sh build)`;
  return false;
}

export interface VmResult {
  output: string;
  code: number;
}

export interface Vm {
  /** Runs a bash script in the guest; rejects when no answer comes within `timeoutMs`. */
  run(script: string, timeoutMs?: number): Promise<VmResult>;
  /** Like run, but rejects on a non-zero exit code, with the output. */
  must(script: string, timeoutMs?: number): Promise<string>;
  /** qemu's resident memory now and at its peak (MB), from /proc. */
  memoryMb(): Promise<{ rss: number; peak: number }>;
  /** Kills qemu (its tap goes with it) and removes the agent's socket. */
  close(): Promise<void>;
}

export interface VmOptions {
  /** The tap device qemu makes for the guest's NIC, and the NIC's MAC. */
  tap: string;
  mac: string;
  /** How long the guest may take to boot to its agent. */
  bootTimeoutMs?: number;
  /** A host directory the guest may mount read-only (9p tag `raven`: see {@link mountShare}). */
  share?: string;
  /** Host loopback ports the guest reaches at 10.0.2.100 through a second NIC, qemu's user-mode network. */
  forwards?: number[];
}

/**
 * The guest script that mounts the shared directory at `dir`, brings the user-mode NIC (the guest's only non-tap NIC,
 * `eth1`) up and makes each forwarded port answer on the guest's own 127.0.0.1, so that URLs and certificates made
 * for the host's loopback (a kubeconfig, a clouds.yaml) work unchanged inside.
 */
export function mountShare(dir: string, forwards: number[]): string {
  return [
    'set -e',
    'modprobe -a 9pnet_virtio 9p',
    `mkdir -p ${dir}`,
    `mount -t 9p -o trans=virtio,version=9p2000.L,ro raven ${dir}`,
    'ip link set eth1 up',
    'ip addr add 10.0.2.15/24 dev eth1',
    ...forwards.map(
      (port) =>
        `setsid socat TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr TCP:10.0.2.100:${port} </dev/null >/dev/null 2>&1 &`,
    ),
  ].join('\n');
}

export async function startVm({ tap, mac, bootTimeoutMs = 180_000, share, forwards = [] }: VmOptions): Promise<Vm> {
  const dir = await mkdtemp(join(tmpdir(), 'raven-vm-'));
  const agentPath = join(dir, 'agent.sock');
  const extra = [...(share ? ['--share', share] : []), ...forwards.flatMap((p) => ['--forward', String(p)])];
  const args = [VM_SCRIPT, 'boot', '--agent', agentPath, '--tap', tap, '--mac', mac, ...extra];
  const child: ChildProcess = spawn('bash', args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, RAVEN_VM_DIR: vmDir() },
  });
  // the serial console: kept for the error message of a boot that fails
  let serial = '';
  const keep = (chunk: Buffer) => (serial = (serial + chunk.toString()).slice(-4000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  let socket: Socket | undefined;

  const close = async () => {
    socket?.destroy();
    if (!exited()) {
      const gone = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await Promise.race([gone, sleep(10_000)]);
    }
    await rm(dir, { recursive: true, force: true });
  };

  try {
    await waitFor('qemu to open the agent socket', () => exited() || existsSync(agentPath), { timeoutMs: 30_000 });
    if (exited()) throw new Error(`qemu exited at start: ${serial}`);
    socket = await new Promise<Socket>((res, rej) => {
      const s = connect(agentPath, () => res(s));
      s.once('error', rej);
    });
  } catch (error) {
    await close();
    throw error;
  }

  // answers, one per line, in the order the requests went out (one request at a time)
  let buffer = '';
  const lines: string[] = [];
  let wake: (() => void) | undefined;
  socket.on('data', (chunk) => {
    buffer += chunk.toString();
    let nl;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      lines.push(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
    }
    wake?.();
  });
  let queue = Promise.resolve();
  // set once a request timed out: its late answer would be taken for the next one's
  let lost: string | undefined;

  const request = async (script: string, timeoutMs: number): Promise<VmResult> => {
    if (lost) throw new Error(`the VM's agent is out of step (no answer to: ${lost})`);
    socket.write(Buffer.from(script).toString('base64') + '\n');
    const deadline = Date.now() + timeoutMs;
    while (lines.length === 0) {
      if (exited()) throw new Error(`the VM exited (${child.exitCode ?? child.signalCode}): ${serial}`);
      const left = deadline - Date.now();
      if (left <= 0) {
        lost = script;
        throw new Error(`no answer from the VM within ${timeoutMs} ms to: ${script}\n${serial}`);
      }
      await Promise.race([new Promise<void>((r) => (wake = r)), sleep(Math.min(left, 500))]);
    }
    const [b64 = '', code = '1'] = lines.shift()!.split(' ');
    return { output: Buffer.from(b64, 'base64').toString(), code: Number(code) };
  };
  // one request at a time: a caller's timeout must not let the next answer be taken for its own
  const run = (script: string, timeoutMs = 30_000): Promise<VmResult> => {
    const next = queue.then(() => request(script, timeoutMs));
    queue = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  };
  const must = async (script: string, timeoutMs?: number) => {
    const { output, code } = await run(script, timeoutMs);
    if (code !== 0) throw new Error(`in the VM, exit ${code}: ${script}\n${output}`);
    return output;
  };
  const memoryMb = async () => {
    // vm.sh execs qemu: the child's PID is qemu's
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    const mb = (key: string) => Math.round(Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0) / 1024);
    return { rss: mb('VmRSS'), peak: mb('VmHWM') };
  };

  try {
    // the first answer is the boot: the agent reads the request as soon as it opens its port
    await run('true', bootTimeoutMs);
  } catch (error) {
    await close();
    throw error;
  }
  return { run, must, memoryMb, close };
}
