/**
 * Real packets against Kubernetes' NetworkPolicy semantics on the dataplane rig: sweeps that probe every ordered pair
 * of pods and compare each answer with the specification's evaluator (`kubernetesAllows`), and a TCP connection held
 * open across a change. Probes run only between the pod namespaces a test made.
 */
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import type { Pod } from '../../src/kube/api/index.ts';
import { resources } from '../../src/kube/client/index.ts';
import {
  baseWorld,
  kubernetesAllows,
  podCellName,
  type PodCell,
  type Probe,
  type World,
  type WorldPod,
} from './netpol.ts';
import { probeMany, recentLogs, type DataplaneCluster } from './dataplane.ts';
import { waitFor } from './wait.ts';

export const podKey = (p: WorldPod): string => `${p.namespace}/${p.name}`;

/** The truth table's world cut to the pods in `keep` (`namespace/name`), all on the rig's node, addresses unknown. */
export function rigWorld(host: string, keep: readonly string[]): Omit<World, 'policies'> {
  const world = baseWorld();
  return {
    namespaces: world.namespaces,
    pods: world.pods.filter((p) => keep.includes(podKey(p))).map((p) => ({ ...p, node: host, ip: '' })),
    nodes: [],
  };
}

/**
 * Makes the world's namespaces and pods on the rig's cluster and waits until each runs (its responder on its
 * ports): each world pod's `ip` becomes its address; returns each pod's network namespace by `namespace/name`.
 */
export async function plugWorld(
  cluster: DataplaneCluster,
  world: Omit<World, 'policies'>,
  runningMs: number,
): Promise<Map<string, string>> {
  for (const ns of world.namespaces) await cluster.createNamespace(ns.name, ns.labels);
  await Promise.all(
    world.pods.map((p) =>
      cluster.createPod(p.namespace, p.name, {
        labels: p.labels,
        ports: p.ports.map((port) => ({ ...port, protocol: port.protocol === 'UDP' ? 'UDP' : 'TCP' })),
      }),
    ),
  );
  const netnsOf = new Map<string, string>();
  await Promise.all(
    world.pods.map(async (p) => {
      const pod: Pod = await waitFor(
        `pod ${podKey(p)} running with an IP`,
        async () => {
          const got = await cluster.client.get(resources.pods, p.name, p.namespace);
          return got.status?.phase === 'Running' && got.status.podIP ? got : undefined;
        },
        { timeoutMs: runningMs, intervalMs: 200, progress: cluster.progress },
      );
      p.ip = pod.status!.podIP!;
      netnsOf.set(podKey(p), cluster.netnsOf(pod));
    }),
  );
  return netnsOf;
}

export interface SweepResult {
  cells: number;
  denied: number;
  /** Cells whose packets disagree with Kubernetes, as `src → dst proto/port: expected allow|deny`. */
  wrong: string[];
  /** The cells that were answered, by name. */
  answered: Set<string>;
}

export interface Enforced {
  /** Seconds from `since` to the start of the last sweep that disagreed (0: none did) … */
  after: number;
  /**
   * … and to the start of the first of the two that agreed plus the probe time: a probe retries (TCP retransmits its
   * SYN after 1 s) until then, so a sweep sees the state of its first seconds. Enforcement happened in between.
   */
  by: number;
  cells: number;
  denied: number;
}

export interface PolicyProber {
  /** Every probe from every pod to every other pod at once (one process per source pod). */
  sweep: (world: World) => Promise<SweepResult>;
  /**
   * Sweeps until two in a row agree with Kubernetes on every cell; fails after `timeoutMs` with the cells that still
   * disagree. `onSweep` sees each sweep (a transition test checks what must never be denied).
   */
  enforced: (world: World, since: number, onSweep?: (result: SweepResult) => void) => Promise<Enforced>;
}

export function policyProber(o: {
  netnsOf: (pod: WorldPod) => string;
  probes: readonly Probe[];
  /** A probe that gets no answer in this time counts as denied (Neutron drops; nothing is rejected). */
  probeSeconds: number;
  timeoutMs: number;
  /** Neutron's answers to Raven so far (`DataplaneCluster.progress`): while they come, a slow cloud gets more time. */
  progress?: () => unknown;
  /** More to say when packets never agree (the ports' groups in Neutron). */
  explain?: () => Promise<string>;
}): PolicyProber {
  const sweep = async (w: World): Promise<SweepResult> => {
    const wrong: string[] = [];
    const answered = new Set<string>();
    let cells = 0;
    let denied = 0;
    await Promise.all(
      w.pods.map(async (src) => {
        const cellsOf: PodCell[] = w.pods
          .filter((dst) => dst !== src)
          .flatMap((dst) => o.probes.map((probe) => ({ src, dst, probe })));
        const answers = await probeMany(
          o.netnsOf(src),
          cellsOf.map(({ dst, probe }) => ({
            protocol: probe.protocol as 'TCP' | 'UDP',
            address: dst.ip,
            port: probe.port,
          })),
          o.probeSeconds,
        );
        cellsOf.forEach((cell, i) => {
          cells++;
          const want = kubernetesAllows(w, { pod: src }, { pod: cell.dst }, cell.probe);
          if (!want) denied++;
          const answer = answers[i];
          if (answer !== undefined) answered.add(podCellName(cell));
          if (answer !== undefined && answer !== cell.dst.name)
            wrong.push(`${podCellName(cell)}: answered by ${answer}`);
          else if (want !== (answer !== undefined))
            wrong.push(`${podCellName(cell)}: expected ${want ? 'allow' : 'deny'}`);
        });
      }),
    );
    return { cells, denied, wrong: wrong.sort(), answered };
  };

  const enforced = async (w: World, since: number, onSweep?: (r: SweepResult) => void): Promise<Enforced> => {
    let last: string[] = [];
    let lastDisagreeing: number | undefined;
    let firstAgreeing: number | undefined;
    try {
      return await waitFor(
        'real packets agree with Kubernetes on every cell',
        async () => {
          const started = Date.now();
          const result = await sweep(w);
          onSweep?.(result);
          last = result.wrong;
          if (result.wrong.length > 0) {
            lastDisagreeing = started;
            firstAgreeing = undefined;
            return undefined;
          }
          if (firstAgreeing === undefined) {
            firstAgreeing = started;
            return undefined;
          }
          const after = lastDisagreeing === undefined ? 0 : (lastDisagreeing - since) / 1000;
          const by = (firstAgreeing - since) / 1000 + o.probeSeconds;
          return { after, by, cells: result.cells, denied: result.denied };
        },
        { timeoutMs: o.timeoutMs, intervalMs: 100, progress: o.progress },
      );
    } catch (err) {
      const more = o.explain ? `\n${await o.explain().catch((e: Error) => e.message)}` : '';
      const logs = recentLogs(30);
      assert.fail(
        `${String(err)}; disagreeing cells:\n  ${last.join('\n  ')}${more}\nRaven's last log lines:\n${logs}`,
      );
    }
  };
  return { sweep, enforced };
}

/** What a held connection saw, from its open to its close. */
export interface HeldConnection {
  /** Echoes asked for and answered. */
  sent: number;
  echoed: number;
  /** Segments the client's kernel sent again (`tcpi_total_retrans`): a packet of the connection was lost or late. */
  retransmits: number;
  /** The longest an echo took (ms): a measurement, reported, never asserted. */
  slowestMs: number;
  /** Why it ended early (reset, closed, no echo in time), if it did. */
  error?: string;
}

/**
 * A TCP connection from one pod namespace to a responder, held open: an echo every 200 ms until {@link close}, each
 * awaited (up to 60 s). Bounded: the client process ends itself after `maxSeconds`.
 */
export async function holdConnection(
  fromNetns: string,
  address: string,
  port: number,
  maxSeconds = 300,
): Promise<{ close(): Promise<HeldConnection> }> {
  // The kernel's tcp_info: tcpi_total_retrans is the u32 at byte 100 (linux/tcp.h).
  const script = `
import json, socket, struct, sys, threading, time
host, port, limit = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
stop = threading.Event()
threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
out = {"sent": 0, "echoed": 0, "retransmits": 0, "slowestMs": 0}
s = socket.create_connection((host, port), timeout=10)
s.recv(256)
print("open", flush=True)
s.settimeout(60)
end = time.time() + limit
try:
    while not stop.is_set() and time.time() < end:
        out["sent"] += 1
        t0 = time.time()
        s.sendall(b"%d\\n" % out["sent"])
        got = b""
        while not got.endswith(b"\\n"):
            chunk = s.recv(256)
            if not chunk: raise OSError("closed by the peer")
            got += chunk
        out["echoed"] += 1
        out["slowestMs"] = max(out["slowestMs"], round((time.time() - t0) * 1000))
        stop.wait(0.2)
except OSError as e:
    out["error"] = str(e) or type(e).__name__
out["retransmits"] = struct.unpack_from("I", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104), 100)[0]
s.close()
print(json.dumps(out), flush=True)
`;
  const child = spawn(
    'ip',
    ['netns', 'exec', fromNetns, '/usr/bin/python3', '-c', script, address, String(port), String(maxSeconds)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-2000)));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  await waitFor(`a TCP connection to ${address}:${port} from ${fromNetns}`, () => stdout.startsWith('open\n'), {
    timeoutMs: 15_000,
    intervalMs: 50,
    explain: () => stderr || 'no output',
  });
  return {
    async close() {
      child.stdin.end();
      const killer = setTimeout(() => child.kill('SIGKILL'), 70_000);
      await exited;
      clearTimeout(killer);
      const line = stdout.split('\n').find((l) => l.startsWith('{'));
      if (!line) throw new Error(`the held connection ended without a report: ${stderr}`);
      return JSON.parse(line) as HeldConnection;
    },
  };
}
