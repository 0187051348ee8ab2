/**
 * What the benchmark groups that run Raven's controller share (`raven`, `pools`): the controller in its own process
 * (raven-process.ts) and its IPC handle, the OpenStack simulator's test API (`/_sim/`), the latency model of the real
 * Neutron, the real cloud's clouds.yaml, calls-per-pod formatting, and the clean-up of a run on the real Neutron.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { transformSync } from 'esbuild';
import { request } from 'undici';
import { parse as parseYaml } from 'yaml';
import { loadCloudConfig, NeutronClient, OpenStackSession } from '../src/openstack/index.ts';
import { forkEntry, nextMessage, stopChild } from './processes.ts';
import type { RavenCommand, RavenProcessOptions, RavenReply, RavenUsage } from './raven-process.ts';
import { runPool } from './support.ts';

export const realClouds = process.env.RAVEN_OPENSTACK_CLOUDS ?? '.raven/openstack/clouds.yaml';
export const realCloudName = 'raven-real-noauth';

/**
 * Why the real Neutron rows cannot run, or undefined when they can: its clouds.yaml exists (`npm run
 * openstack:start` writes it, and `openstack:stop` leaves it) and its noauth Neutron answers on its endpoint.
 */
export async function realNeutronMissing(): Promise<string | undefined> {
  if (!existsSync(realClouds))
    return `no ${realClouds} (start it with npm run openstack:start, or set RAVEN_OPENSTACK_CLOUDS)`;
  const cloud = loadCloudConfig({ cloud: realCloudName, env: { OS_CLIENT_CONFIG_FILE: realClouds } });
  const url = cloud.endpointOverrides.network;
  if (!url) return `${realClouds}: cloud ${realCloudName} has no network endpoint`;
  try {
    const res = await request(url, { headersTimeout: 3_000, bodyTimeout: 3_000 });
    await res.body.dump();
    return undefined;
  } catch (err) {
    return `the real Neutron at ${url} does not answer (${err instanceof Error ? err.message : String(err)}): start it with npm run openstack:start`;
  }
}

/**
 * Latency modelled on the real Neutron (docs/openstack.md, "Neutron", Zed, noauth, MariaDB, api_workers 2, this
 * 2-core machine): single port create ~370 ms p50 with 4 in flight; `GET /ports?name=<one>` 14–41 ms with ~1,000
 * ports (modelled at its upper end); PUT tags ~30 ms (not in docs/openstack.md: the issue's figure). A port update
 * (`PUT ports/{id}`: a pool port's claim, `device_id` and name with If-Match, on a bound port) and a port delete were
 * measured on that Neutron for the pools group (2026-11-26, one request in flight, 20 updates / 10 deletes): update
 * 81–210 ms, p50 ~100 ms; delete 125–260 ms, p50 ~160 ms. Other routes: no delay. A bulk create is one request here,
 * delayed like a single one: the real Neutron spends about as long per port in a bulk request as in single ones.
 */
export const neutronLike = [
  { method: 'POST', path: '/network/v2.0/ports', latency: { p50Ms: 370, p99Ms: 600 } },
  { method: 'GET', path: '/network/v2.0/ports', latency: { p50Ms: 40, p99Ms: 80 } },
  { method: 'PUT', path: '/network/v2.0/ports/{id}/tags', latency: { p50Ms: 30, p99Ms: 60 } },
  { method: 'PUT', path: '/network/v2.0/ports/{id}', latency: { p50Ms: 100, p99Ms: 200 } },
  { method: 'DELETE', path: '/network/v2.0/ports/{id}', latency: { p50Ms: 160, p99Ms: 300 } },
];
export const neutronLikeText =
  'POST ports p50 370 / p99 600 ms (a bulk POST too), GET ports 40 / 80 ms, PUT ports/{id}/tags 30 / 60 ms, PUT ports/{id} 100 / 200 ms, DELETE ports/{id} 160 / 300 ms (log-normal)';

/** The controller in its own process, and what this process asks it over IPC. */
export interface RavenHandle {
  child: ChildProcess;
  /** The controller's ops server (`/metrics`). */
  opsUrl: string;
  /** OpenStack calls by `<service> <METHOD> <route>`, counted on its session since the last reset. */
  counts(reset: boolean): Promise<Record<string, number>>;
  /** Its CPU time and memory; `resetPeak` starts a new peak RSS (high-water mark) from now. */
  usage(resetPeak: boolean): Promise<RavenUsage>;
  /** When each pod's port became its own in Neutron (pod uid → epoch ms of the answer), since the last reset. */
  claims(reset: boolean): Promise<Record<string, number>>;
  /** The same, with the uids of the pods whose port was a cold create (`POST ports`), not a pool's. */
  claimKinds(reset: boolean): Promise<{ claims: Record<string, number>; cold: string[] }>;
  /** Epoch ms of Neutron's answer to its last request and to its last write (0: none yet). */
  lastCall(): Promise<{ anyAt: number; writeAt: number }>;
  stop(): Promise<void>;
}

const processEntry = new URL('./raven-process.ts', import.meta.url);
let transpiledEntry: string | undefined;

/**
 * raven-process.ts as JavaScript (esbuild strips its types; it has only type imports), in a temporary directory: the
 * controller on the compiled runtime then runs without tsx, as `raven run` does.
 */
function javaScriptEntry(): string {
  if (!transpiledEntry) {
    const { code } = transformSync(readFileSync(processEntry, 'utf8'), {
      loader: 'ts',
      format: 'esm',
      target: 'node20',
    });
    transpiledEntry = join(mkdtempSync(join(tmpdir(), 'raven-bench-process-')), 'raven-process.mjs');
    writeFileSync(transpiledEntry, code);
  }
  return transpiledEntry;
}

/**
 * Starts raven-process.ts — through tsx on the sources, or transpiled on the compiled runtime (no tsx, no
 * `--expose-gc`: nothing but `raven run`'s code in the process, and `nodeFlags` on its command line); its stdout
 * (pino) goes to this process's stderr, off the printed table.
 */
export async function startRavenProcess(options: RavenProcessOptions, nodeFlags: string[] = []): Promise<RavenHandle> {
  const dist = options.runtime === 'dist';
  const repo = new URL('../', import.meta.url).href;
  const child = fork(dist ? javaScriptEntry() : fileURLToPath(processEntry), [JSON.stringify({ ...options, repo })], {
    stdio: ['ignore', 2, 2, 'ipc'],
    ...(dist ? { execArgv: nodeFlags, env: { ...process.env, NODE_OPTIONS: '' } } : {}),
  });
  const failed = nextMessage<RavenReply, 'failed'>(child, 'failed', 3_600_000);
  failed.then(
    (m) => process.stderr.write(`\nbench: raven process failed: ${m.message}\n`),
    () => undefined,
  );
  const ready = await nextMessage<RavenReply, 'ready'>(child, 'ready', 60_000).catch((err: unknown) => {
    child.kill('SIGKILL');
    throw err;
  });
  const ask = async <K extends RavenReply['type']>(command: RavenCommand, type: K) => {
    const reply = nextMessage<RavenReply, K>(child, type, 30_000);
    child.send(command);
    return reply;
  };
  return {
    child,
    opsUrl: ready.opsUrl,
    counts: async (reset) => (await ask({ type: 'counts', reset }, 'counts')).counts,
    usage: async (resetPeak) => (await ask({ type: 'usage', resetPeak }, 'usage')).usage,
    claims: async (reset) => (await ask({ type: 'claims', reset }, 'claims')).claims,
    claimKinds: async (reset) => {
      const { claims, cold } = await ask({ type: 'claims', reset }, 'claims');
      return { claims, cold };
    },
    lastCall: async () => {
      const { anyAt, writeAt } = await ask({ type: 'last-call' }, 'last-call');
      return { anyAt, writeAt };
    },
    stop: () => stopChild(child, { type: 'close' }),
  };
}

/** The simulator's base URL, from the Keystone auth URL in the clouds.yaml it wrote. */
export function simBaseUrl(cloudsYaml: string): string {
  const doc = parseYaml(readFileSync(cloudsYaml, 'utf8')) as { clouds: Record<string, { auth: { auth_url: string } }> };
  return doc.clouds['raven-sim']!.auth.auth_url.replace(/\/identity\/v3\/?$/, '');
}

export async function simApi(
  base: string,
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: object,
): Promise<unknown> {
  const res = await request(`${base}/_sim/${path}`, {
    method,
    ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(`sim ${method} /_sim/${path}: HTTP ${res.statusCode} ${text}`);
  return JSON.parse(text) as unknown;
}

/** `GET /network/v2.0/ports` → `GET ports`; `network PUT /v2.0/ports/{id}/tags` → `PUT ports/{id}/tags`. */
export function shortRoute(key: string): string {
  return key.replace(/^network /, '').replace(/ \/(network\/)?v2\.0\//, ' ');
}

/** Calls per pod of each Neutron route, the total first: `4.00 (GET ports 2.00, POST ports 1.00, …)`. */
export function perPod(counts: Record<string, number>, pods: number, isNeutron: (key: string) => boolean): string {
  const routes = Object.entries(counts)
    .filter(([k]) => isNeutron(k))
    .sort(([, a], [, b]) => b - a);
  const total = routes.reduce((s, [, n]) => s + n, 0);
  const parts = routes.map(([k, n]) => `${shortRoute(k)} ${(n / pods).toFixed(2)}`);
  return `${(total / pods).toFixed(2)}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
}

/** Deletes everything of `clusterId` from the real Neutron: ports, router interfaces, router, networks. */
export async function cleanUpReal(session: OpenStackSession, clusterId: string): Promise<void> {
  const neutron = new NeutronClient(session);
  const tag = [`raven.cluster=${clusterId}`];
  const ports = await neutron.ports.list({ tags: tag }, { fields: ['id'] });
  await runPool(ports.length, 4, 120_000, async (i) => {
    await neutron.ports.delete(ports[i]!.id);
  });
  const subnets = await neutron.subnets.list({ tags: tag }, { fields: ['id'] });
  for (const router of await neutron.routers.list({ tags: tag }, { fields: ['id'] })) {
    for (const s of subnets)
      await neutron.routers.removeInterface(router.id, { subnetId: s.id }).catch(() => undefined);
    await neutron.routers.delete(router.id);
  }
  for (const net of await neutron.networks.list({ tags: tag }, { fields: ['id'] }))
    await neutron.networks.delete(net.id);
}

/**
 * The cloud of a rig: the simulator (with or without Neutron-like latency; ports on `linuxbridgeHosts` bind as
 * linuxbridge, for a rig that plugs them), or the real Neutron.
 */
export type BenchCloud =
  { kind: 'sim'; latency: boolean; linuxbridgeHosts?: readonly string[] } | { kind: 'real'; cloudsYaml: string };

/**
 * Starts a rig's cloud: the simulator in a process of its own (Neutron-like latency rules set when asked), or the
 * real Neutron, where everything of `clusterId` is deleted at clean-up (timed by nobody). Its clean-up goes first in
 * `cleanups`. Returns the controller's cloud options and, on the simulator, the base URL of its test API.
 */
export async function startCloud(
  bench: BenchCloud,
  clusterId: string,
  networkConcurrency: number,
  cleanups: (() => Promise<unknown>)[],
): Promise<{ cloud: RavenProcessOptions['cloud']; simBase: string | undefined }> {
  if (bench.kind === 'sim') {
    const sim = forkEntry('./openstack-sim-process.ts', { linuxbridgeHosts: bench.linuxbridgeHosts ?? [] });
    cleanups.unshift(() => stopChild(sim, { type: 'close' }));
    const ready = await nextMessage<{ type: 'ready'; cloudsYaml: string }, 'ready'>(sim, 'ready', 30_000);
    const simBase = simBaseUrl(ready.cloudsYaml);
    if (bench.latency) for (const rule of neutronLike) await simApi(simBase, 'POST', 'faults/rules', rule);
    return {
      cloud: { cloudsYaml: ready.cloudsYaml, name: 'raven-sim', networkConcurrency, timeoutMs: 60_000 },
      simBase,
    };
  }
  const { cloudsYaml } = bench;
  cleanups.unshift(async () => {
    const session = new OpenStackSession({
      cloud: loadCloudConfig({ cloud: realCloudName, env: { OS_CLIENT_CONFIG_FILE: cloudsYaml } }),
      timeoutMs: 120_000,
    });
    await cleanUpReal(session, clusterId).finally(() => session.close());
  });
  return { cloud: { cloudsYaml, name: realCloudName, networkConcurrency, timeoutMs: 120_000 }, simBase: undefined };
}
