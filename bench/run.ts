/**
 * `npm run bench [-- apiserver|client|openstack|raven|memory|topology|dataplane …]`: the benchmarks of the chosen groups (all but
 * `dataplane` when none is named), printed as one markdown table with the conditions they ran under. `apiserver` is the
 * embedded API server; `client` is Raven's informers and controller, beside @kubernetes/client-node's informer;
 * `openstack` is the OpenStack client's overhead and port-create throughput on the simulator and (when running) the
 * real Neutron; `raven` is the controller's pod → VIF latency and calls per pod for a pod burst; `policies` is the NetworkPolicy
 * translation at 1,000 pods and 100 policies (groups, rules, calls, change latency) against per-pod rules; `memory` is the
 * controller's resident memory (`raven run`, tsx and compiled: `npm run build` first); `topology` is the topology page's
 * bundle, one snapshot at 1,000 pods (build time, bytes) and the page at 1,000 pods in chromium; `dataplane` (root, the
 * rig running) is pod → first packet on the real Neutron dataplane. Benchmarks assert nothing about timings; every
 * measurement has a fixed operation count and a hard time cap, and a watchdog ends the whole run (printing what it
 * has) if it still runs after the chosen groups' caps added up.
 * All traffic goes to 127.0.0.1 (the dataplane group's pings: between pod namespaces it made). Run with `--expose-gc` (the npm script does) for the memory rows.
 */
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { clientNotes, runClientGroup } from './client-group.ts';
import { openStackNotes, runOpenStackGroup } from './openstack.ts';
import { ravenNotes, runRavenGroup } from './raven.ts';
import { memoryNotes, runMemoryGroup } from './raven-memory.ts';
import { runMemoryScale, scaleNotes } from './raven-memory-scale.ts';
import { poolsNotes, runPoolsGroup } from './pools.ts';
import { policiesNotes, runPoliciesGroup } from './policies.ts';
import { dataplaneNotes, runDataplaneGroup } from './dataplane.ts';
import { benchFanout } from './fanout.ts';
import { benchList } from './list.ts';
import { benchProtobuf } from './protobuf.ts';
import { benchMemory } from './memory.ts';
import { fmtInt, type Row } from './support.ts';
import { benchWrites } from './writes.ts';
import { benchTopology, topologyNotes } from './topology.ts';
import { benchTopologyPage, topologyPageNotes } from './topology-page.ts';

const concurrency = 16;

interface Group {
  title: string;
  /** This group's share of the whole run's time cap. */
  capMs: number;
  notes: string[];
  run(): Promise<void>;
}

const groups: Record<string, Group> = {
  apiserver: {
    title: 'API server',
    capMs: 200_000,
    notes: [
      `- The server runs alone in a child process (\`runApiServer\`, \`tls: 'none'\` unless the row says HTTPS) on 127.0.0.1, port 0; clients are undici 7 with keep-alive, one request in flight per connection.`,
      `- writes/s: ${concurrency} requests in flight; each condition has a fresh server, warmed with 2,000 unmeasured creates and updates in another namespace; updates are PUTs carrying the resourceVersion from the create. The watchers are real HTTP watch streams on \`/api/v1/namespaces/bench/configmaps\`, opened and read by a second child process (not the writer's or the server's event loop); the three processes share the machine's CPUs. Latency is per request, measured by the writer.`,
      '- watch fan-out: the watchers are read by the writer\'s own process so one `performance.now()` clock times send and receipt; the next write is sent once every watcher has the previous event. "every delivery" is receipt − send over all watchers × writes, "last watcher" is the slowest watcher per write; both include the client process reading N sockets one after another on its single event loop.',
      '- memory: in-process, no HTTP; heapUsed after three forced GCs, after − before, divided by the pods stored. The JSON size is the stored pod as the API serves it.',
      '- LIST: the client reads the bytes but does not parse the JSON; p50 over the repeats after one warm-up walk.',
      "- protobuf vs JSON: one server process, one keep-alive connection; the same 1,000 pods as a LIST and as the ADDED events of a watch from resourceVersion 0, asked for as JSON and as protobuf (`Accept`). Bytes are the body; p50 over 5 repeats after a warm-up, request to last byte; decode is the client turning the bytes into objects (JSON.parse, or this repository's protobuf decoder), p50 of 3.",
    ],
    run: runApiServerGroup,
  },
  topology: {
    title: 'topology view: page bundle, snapshot and the page in chromium at 1,000 pods',
    capMs: 60_000,
    notes: [...topologyNotes, ...topologyPageNotes],
    run: async () => {
      await step('topology', benchTopology);
      await step('topology page', benchTopologyPage);
    },
  },
  client: {
    title: 'client (informers, controller)',
    capMs: 130_000,
    notes: clientNotes,
    run: () => runClientGroup(step),
  },
  openstack: {
    title: 'OpenStack client, simulator and real Neutron',
    capMs: 240_000,
    notes: openStackNotes,
    run: () => runOpenStackGroup(step),
  },
  raven: {
    title: 'Raven: pod → VIF latency and calls per pod',
    capMs: 600_000,
    notes: ravenNotes,
    run: () => runRavenGroup(step),
  },
  pools: {
    title: 'Raven: warm port pools against the cold path, and a restart over 10,000 wired pods',
    capMs: 3_600_000,
    notes: poolsNotes,
    run: () => runPoolsGroup(step),
  },
  policies: {
    title: 'Raven: NetworkPolicy → security groups at 1,000 pods and 100 policies, against per-pod rules',
    capMs: 180_000,
    notes: policiesNotes,
    run: () => runPoliciesGroup(step),
  },
  memory: {
    title: "Raven: the controller's resident memory, tsx and compiled, and at 10,000 pods",
    // The 1,000-pod variants, then the scale run (minutes of set-up on 2 cores; its steps have caps of their own).
    capMs: 600_000 + 4_200_000,
    notes: [...memoryNotes, ...scaleNotes],
    run: async () => {
      await runMemoryGroup(step);
      await runMemoryScale(step);
    },
  },
  dataplane: {
    title: 'real dataplane: pod → VIF → CNI ADD → first packet',
    capMs: 600_000,
    notes: dataplaneNotes,
    run: () => runDataplaneGroup(step),
  },
};

const names = process.argv.slice(2);
const unknown = names.filter((n) => !Object.hasOwn(groups, n));
if (unknown.length > 0) {
  console.error(
    `unknown benchmark group: ${unknown.join(', ')}; choose from ${Object.keys(groups).join(', ')} (none = all)`,
  );
  process.exit(2);
}
// The dataplane group needs root and a running rig: only when named.
const selected = (names.length > 0 ? [...new Set(names)] : Object.keys(groups).filter((n) => n !== 'dataplane')).map(
  (n) => groups[n]!,
);
const runCapMs = selected.reduce((sum, g) => sum + g.capMs, 0);

const rows: Row[] = [];
const failures: string[] = [];
const started = performance.now();

/** Runs one benchmark; a failure is reported as a row instead of ending the run. */
async function step(name: string, run: () => Promise<Row[]>): Promise<void> {
  const t0 = performance.now();
  process.stderr.write(`bench: ${name} …`);
  try {
    rows.push(...(await run()));
    process.stderr.write(` ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  } catch (err) {
    process.stderr.write(' failed\n');
    const message = err instanceof Error ? err.message : String(err);
    failures.push(`${name}: ${message}`);
    rows.push({ benchmark: name, condition: '', result: `FAILED: ${message}` });
  }
}

function cell(text: string): string {
  return text.replace(/\|/g, '\\|');
}

function print(partial: boolean): void {
  const cpu = cpus();
  const out = [
    `## Raven benchmarks: ${selected.map((g) => g.title).join('; ')}`,
    '',
    `- node ${process.version} on ${process.platform}/${process.arch}; ${cpu.length} CPU${cpu.length === 1 ? '' : 's'}: ${cpu[0]?.model.trim() ?? 'unknown'}`,
    `- date ${new Date().toISOString()}; whole run ${((performance.now() - started) / 1000).toFixed(0)} s${partial ? ' (STOPPED by the run time cap: partial results)' : ''}`,
    '',
    '| benchmark | condition | result |',
    '|---|---|---|',
    ...rows.map((r) => `| ${cell(r.benchmark)} | ${cell(r.condition)} | ${cell(r.result)} |`),
    '',
    'Notes:',
    ...selected.flatMap((g) => g.notes),
    '- Benchmarks are not tests: numbers vary with the machine and whatever else runs on it.',
  ];
  if (failures.length > 0) out.push('', 'Failures:', ...failures.map((f) => `- ${f}`));
  console.log(out.join('\n'));
}

async function runApiServerGroup(): Promise<void> {
  for (const watchers of [0, 10, 100]) {
    await step(`writes/s, ${watchers} watchers`, () =>
      benchWrites({ watchers, tls: 'none', count: 4_000, concurrency, phaseCapMs: 10_000 }),
    );
  }
  await step('writes/s, 0 watchers, HTTPS', () =>
    benchWrites({ watchers: 0, tls: 'self-signed', count: 4_000, concurrency, phaseCapMs: 10_000 }),
  );
  for (const watchers of [1, 100, 1_000]) {
    await step(`watch fan-out, ${fmtInt(watchers)} watchers`, () =>
      benchFanout({ watchers, writes: 200, capMs: 15_000, perWriteTimeoutMs: 2_000 }),
    );
  }
  for (const historyLimit of [10_000, 1]) {
    await step(`memory, historyLimit ${historyLimit}`, () =>
      benchMemory({ pods: 20_000, historyLimit, capMs: 30_000 }),
    );
  }
  await step('LIST pods', () => benchList({ pods: 10_000, pageSize: 500, repeats: 5, capMs: 15_000 }));
  await step('protobuf vs JSON', () => benchProtobuf({ pods: 1_000, repeats: 5, capMs: 10_000 }));
}

const watchdog = setTimeout(() => {
  print(true);
  process.exit(1);
}, runCapMs);
watchdog.unref();

for (const group of selected) await group.run();

clearTimeout(watchdog);
print(false);
process.exitCode = failures.length > 0 ? 1 : 0;
