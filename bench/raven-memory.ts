/**
 * The `memory` benchmark group (issue 15): the resident memory of `raven run` — the real command line,
 * `bin/raven.js`, through tsx or compiled (the image's bundle, dist/raven/: `npm run build` first), and compiled with
 * the Node.js flags of the image's entrypoint — idle after start and with 1,000 pods wired, against the API server and the OpenStack simulator
 * in processes of their own. The controller gets `--expose-gc` and a probe module (below) that answers this process
 * over IPC; nothing else about it differs from a user's `raven run`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { kubeconfigYaml } from '@raven/dev';
import type { Step } from './client-group.ts';
import { callOk, ensureNamespace, keepAliveAgent, type Target } from './http.ts';
import { forkEntry, nextMessage, startServerProcess, stopChild } from './processes.ts';
import { VifWatch } from './raven.ts';
import { benchPod, delay, fmtInt, runPool, type Row } from './support.ts';

const root = new URL('../', import.meta.url);
const ravenBin = fileURLToPath(new URL('bin/raven.js', root));
const namespace = 'bench';
const pods = 1_000;
const runsPerVariant = 2;

/** What the probe reports after three forced collections. */
export interface MemorySample {
  rss: number;
  /** RSS in anonymous pages (V8's heap, malloc) and in file pages (the node binary and libraries, shared). */
  rssAnon: number;
  rssFile: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** `process.resourceUsage().maxRSS`: the high-water mark since the process started. */
  peakRss: number;
  /** CPU time (user + system) since the process started, in µs. */
  cpuMicros: number;
  /** Bytes used in each of V8's heap spaces (`v8.getHeapSpaceStatistics()`): where the heap goes. */
  spaces: Record<string, number>;
}

/**
 * Preloaded into the controller (`--import`): on `{ type: 'memory' }` it collects three times and replies; on
 * `{ type: 'snapshot', path }` it writes a heap snapshot there (to find where the memory goes; not timed). The IPC
 * channel is unref'd so it never keeps the process alive, and the probe is plain JavaScript so it runs without tsx.
 */
const probe = `data:text/javascript,${encodeURIComponent(`
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';
process.channel?.unref();
const kB = (status, field) => 1024 * parseInt(status.find((l) => l.startsWith(field + ':')).slice(field.length + 1), 10);
process.on('message', (m) => {
  if (m?.type === 'snapshot') return process.send({ type: 'snapshot', path: v8.writeHeapSnapshot(m.path) });
  if (m?.type !== 'memory') return;
  for (let i = 0; i < 3; i++) globalThis.gc();
  const u = process.memoryUsage();
  const r = process.resourceUsage();
  const status = readFileSync('/proc/self/status', 'utf8').split('\\n');
  process.send({ type: 'memory', rss: u.rss, rssAnon: kB(status, 'RssAnon'), rssFile: kB(status, 'RssFile'),
    heapUsed: u.heapUsed, heapTotal: u.heapTotal, external: u.external, peakRss: r.maxRSS * 1024,
    cpuMicros: r.userCPUTime + r.systemCPUTime,
    spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((x) => [x.space_name, x.space_used_size])) });
});`)}`;

export interface Variant {
  label: string;
  /** `RAVEN_RUNTIME`: `product` runs the image's bundle (dist/raven/), not the development tools' of a checkout. */
  runtime: 'product' | 'tsx';
  /** Node.js flags before `bin/raven.js`. */
  nodeFlags: string[];
}

interface RunResult {
  start: MemorySample;
  wired: MemorySample;
  /** From the first create to the last VIF annotation seen. */
  wiredInMs: number;
}

/** The Node.js flags of the image's entrypoint (deploy/Containerfile): what a deployed controller runs with. */
export function imageNodeFlags(): string[] {
  const text = readFileSync(fileURLToPath(new URL('deploy/Containerfile', root)), 'utf8');
  const line = text.split('\n').find((l) => l.startsWith('ENTRYPOINT '));
  if (!line) throw new Error('deploy/Containerfile has no ENTRYPOINT');
  const entrypoint = JSON.parse(line.slice('ENTRYPOINT '.length)) as string[];
  return entrypoint.slice(1, entrypoint.indexOf('bin/raven.js'));
}

export async function sample(child: ChildProcess): Promise<MemorySample> {
  const reply = nextMessage<{ type: 'memory' } & MemorySample, 'memory'>(child, 'memory', 30_000);
  child.send({ type: 'memory' });
  const { type: _, ...memory } = await reply;
  return memory;
}

/** Has the controller write a heap snapshot to `path` (blocks it for seconds; after the samples only). */
export async function heapSnapshot(child: ChildProcess, path: string): Promise<string> {
  const reply = nextMessage<{ type: 'snapshot'; path: string }, 'snapshot'>(child, 'snapshot', 120_000);
  child.send({ type: 'snapshot', path });
  return (await reply).path;
}

/** A `raven run` this bench spawned: its process (the probe answers on its IPC channel) and how to stop it. */
export interface RavenRun {
  child: ChildProcess;
  /** SIGTERM, then SIGKILL after 10 s; resolves when it exited. */
  stop: () => Promise<void>;
}

/**
 * Spawns `raven run` as a user runs it, against `target` and the simulator of `cloudsYaml`, with the probe preloaded:
 * `raven run`'s defaults but for what a benchmark process needs (no Lease, quiet logs, ops on `opsPort`, 0: a free
 * port nobody reads), shared subnet strategy. Its files go to `dir`.
 */
export function spawnRaven(
  variant: Variant,
  target: Target,
  cloudsYaml: string,
  dir: string,
  opsPort = 0,
  extraConfig: object = {},
): RavenRun {
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, kubeconfigYaml({ server: target.url, token: target.token }), { mode: 0o600 });
  const config = join(dir, 'raven.json');
  writeFileSync(
    config,
    JSON.stringify({
      clusterId: 'bench',
      subnets: { strategy: 'shared', shared: { cidr: '10.244.0.0/16' } },
      serviceSubnet: { cidr: '10.96.0.0/12' },
      leaderElection: { enabled: false },
      ops: { host: '127.0.0.1', port: opsPort },
      logLevel: 'warn',
      ...extraConfig,
    }),
  );
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(OS_|RAVEN_|KUBECONFIG$|NODE_OPTIONS$)/.test(k)),
  );
  const child = spawn(
    process.execPath,
    [
      ...variant.nodeFlags,
      '--expose-gc',
      '--import',
      probe,
      ravenBin,
      'run',
      '--config',
      config,
      '--kubeconfig',
      kubeconfig,
    ],
    {
      env: { ...env, RAVEN_RUNTIME: variant.runtime, OS_CLIENT_CONFIG_FILE: cloudsYaml, OS_CLOUD: 'raven-sim' },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    },
  );
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  return { child, stop };
}

/** Runs each clean-up in order, reporting (not throwing) a failure, so every one runs. */
export async function runCleanups(cleanups: (() => Promise<unknown>)[]): Promise<void> {
  for (const c of cleanups)
    await c().catch((err: unknown) =>
      process.stderr.write(`\nbench: clean-up: ${err instanceof Error ? err.message : String(err)}\n`),
    );
}

/** One controller's life: start, one warm-up pod, a sample; 1,000 pods, a sample. Fresh API server and cloud. */
async function measure(variant: Variant): Promise<RunResult> {
  const dir = mkdtempSync(join(tmpdir(), 'raven-bench-memory-'));
  const cleanups: (() => Promise<unknown>)[] = [() => Promise.resolve(rmSync(dir, { recursive: true, force: true }))];
  try {
    const server = await startServerProcess({ tls: 'none' });
    cleanups.unshift(() => server.stop());
    const target: Target = { url: server.url, token: server.token, caPem: server.caPem };
    const sim = forkEntry('./openstack-sim-process.ts', {});
    cleanups.unshift(() => stopChild(sim, { type: 'close' }));
    const { cloudsYaml } = await nextMessage<{ type: 'ready'; cloudsYaml: string }, 'ready'>(sim, 'ready', 30_000);
    const { child: raven, stop } = spawnRaven(variant, target, cloudsYaml, dir);
    cleanups.unshift(stop);

    const agent = keepAliveAgent(target, 16);
    cleanups.unshift(() => agent.close());
    const watch = new VifWatch();
    cleanups.unshift(() => watch.close());
    await ensureNamespace(agent, target, namespace);
    await watch.open(target);
    const wired = (keys: string[], capMs: number) =>
      watch.until(() => keys.every((k) => watch.annotatedAt.has(k)), capMs);

    // Started: the cluster network made, one pod wired, the start-up GC sweep done.
    await callOk(agent, target, 'POST', `/api/v1/namespaces/${namespace}/pods`, 201, benchPod('warm-0'));
    if (!(await wired([`${namespace}/warm-0`], 90_000))) throw new Error('the warm-up pod got no VIF within 90 s');
    await delay(2_000);
    const start = await sample(raven);

    const name = (i: number) => `pod-${String(i).padStart(5, '0')}`;
    const t0 = performance.now();
    await runPool(pods, 16, 60_000, async (i) => {
      await callOk(agent, target, 'POST', `/api/v1/namespaces/${namespace}/pods`, 201, benchPod(name(i)));
    });
    const keys = Array.from({ length: pods }, (_, i) => `${namespace}/${name(i)}`);
    if (!(await wired(keys, 120_000))) throw new Error(`not all ${pods} pods got a VIF within 120 s`);
    const wiredInMs = Math.max(...keys.map((k) => watch.annotatedAt.get(k)!)) - t0;
    await delay(2_000); // the Events' coalesced writes and the last reconciles settle
    return { start, wired: await sample(raven), wiredInMs };
  } finally {
    await runCleanups(cleanups);
  }
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

/** `41.2 (40.9–41.5)`: the median and the range of the runs, in MB (10⁶ bytes). */
export function mb(values: number[]): string {
  const f = (n: number) => (n / 1e6).toFixed(1);
  return values.length > 1
    ? `${f(median(values))} (${f(Math.min(...values))}–${f(Math.max(...values))})`
    : f(values[0] ?? Number.NaN);
}

/** The numeric fields of a sample. */
type SampleFigure = Exclude<keyof MemorySample, 'spaces'>;

function describe(samples: MemorySample[]): string {
  const of = (key: SampleFigure) => mb(samples.map((s) => s[key]));
  return `RSS ${of('rss')} MB (anonymous ${of('rssAnon')}, file ${of('rssFile')}); heap used ${of('heapUsed')} of ${of('heapTotal')} MB; external ${of('external')} MB; peak RSS so far ${of('peakRss')} MB`;
}

/** `RAVEN_BENCH_MEMORY_ONLY=base|scale`: only the 1,000-pod variants, or only the scale rows (raven-memory-scale.ts). */
export const memoryOnly = process.env.RAVEN_BENCH_MEMORY_ONLY;

/** The image's controller: compiled, with the Node.js flags of deploy/Containerfile's entrypoint. */
export function imageVariant(): Variant {
  const nodeFlags = imageNodeFlags();
  return { label: `compiled, the image's flags ${nodeFlags.join(' ')}`, runtime: 'product', nodeFlags };
}

export async function runMemoryGroup(step: Step): Promise<void> {
  if (!existsSync(new URL('dist/raven/cli.js', root)))
    throw new Error('no dist/: run `npm run build` before the memory group');
  if (memoryOnly === 'scale') return;
  const variants: Variant[] = [
    { label: 'tsx (the sources)', runtime: 'tsx', nodeFlags: [] },
    { label: 'compiled (dist/raven/)', runtime: 'product', nodeFlags: [] },
    imageVariant(),
  ];
  const results = new Map<Variant, RunResult[]>(variants.map((v) => [v, []]));
  // Alternating, so a change in the machine's load falls on every variant.
  for (let run = 1; run <= runsPerVariant; run++) {
    for (const variant of variants) {
      await step(`controller memory, ${variant.label}, run ${run}`, async () => {
        results.get(variant)!.push(await measure(variant));
        return [];
      });
    }
  }
  await step('controller memory, the table', () => {
    const rows: Row[] = [];
    for (const [variant, runs] of results) {
      if (runs.length === 0) continue;
      const cpu = runs.map((r) => (r.wired.cpuMicros - r.start.cpuMicros) / 1e6);
      const wiredIn = runs.map((r) => r.wiredInMs / 1e3);
      rows.push(
        {
          benchmark: 'controller memory (raven run)',
          condition: `${variant.label}: idle after start`,
          result: describe(runs.map((r) => r.start)),
        },
        {
          benchmark: 'controller memory (raven run)',
          condition: `${variant.label}: ${fmtInt(pods)} pods wired`,
          result: `${describe(runs.map((r) => r.wired))}; wired in ${median(wiredIn).toFixed(1)} s with ${median(cpu).toFixed(1)} s of CPU`,
        },
      );
    }
    const [tsx, compiled, image] = variants.map((v) => results.get(v)!);
    const ratio = (a: RunResult[], b: RunResult[], key: 'start' | 'wired', field: SampleFigure) =>
      (median(a.map((r) => r[key][field])) / median(b.map((r) => r[key][field]))).toFixed(2);
    if (tsx?.length && compiled?.length && image?.length) {
      const rss = median(image.map((r) => r.wired.rss));
      rows.push({
        benchmark: 'controller memory (raven run)',
        condition: 'ratios of the medians',
        result:
          `compiled ÷ tsx: RSS at ${fmtInt(pods)} pods ${ratio(compiled, tsx, 'wired', 'rss')}, peak RSS ${ratio(compiled, tsx, 'wired', 'peakRss')}; ` +
          `with the image's flags ÷ tsx: RSS at ${fmtInt(pods)} pods ${ratio(image, tsx, 'wired', 'rss')}, peak RSS ${ratio(image, tsx, 'wired', 'peakRss')}; ` +
          `with the image's flags at ${fmtInt(pods)} pods: RSS ${(rss / 1e6).toFixed(1)} MB, target ≤ 85 MB ${rss <= 85e6 ? 'met' : 'MISSED'} ` +
          `(the old 60 MB target is retired: docs/decisions.md §12; kuryr-controller 113 MB)`,
      });
    }
    return Promise.resolve(rows);
  });
}

export const memoryNotes = [
  `- memory group (issue 15; \`npm run build\` first): \`raven run\` as a user runs it (\`node bin/raven.js run --config … --kubeconfig …\` with \`RAVEN_RUNTIME=tsx\` or \`product\` (dist/raven/), and for the last variant the Node.js flags of deploy/Containerfile's entrypoint before it), the OpenStack simulator (Keystone auth) and the API server (\`tls: 'none'\`) in processes of their own; shared subnet strategy, services translated, leader election off, log level warn, all else default. ${runsPerVariant} runs per variant, alternating, each with fresh processes; median (range) of the runs, MB = 10⁶ bytes.`,
  `- "idle after start": one warm-up pod wired, then 2 s. "${fmtInt(pods)} pods wired": ${fmtInt(pods)} more pods (\`spec.nodeName\` set, 16 creates in flight) all carry \`raven.openstack.org/vif\`, then 2 s. Each sample is taken in the controller by a probe preloaded with \`--import\` (with \`--expose-gc\`, the only flags added besides the variant's), after three \`gc()\` calls: \`process.memoryUsage()\`, RssAnon and RssFile from /proc/self/status (file pages are mostly the node binary's code, shared with every Node.js process on the host), and \`process.resourceUsage().maxRSS\` (the peak since the process started, start-up included).`,
];
