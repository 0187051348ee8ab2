/**
 * One benchmark rig of the `pools` group: the API server, the cloud (the OpenStack simulator in its own process, with
 * or without Neutron-like latency, or the real Neutron) and Raven's controller, each in a process of its own; Node
 * objects (pools serve only pods on Nodes that exist); a watch that times pod → VIF in this process. It creates and
 * deletes pods, tells when the controller has settled (nothing queued, nothing running, no OpenStack request for a
 * while) and reads every counter the rows print.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, statSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import type { Agent } from 'undici';
import { loadCloudConfig, NeutronClient, OpenStackSession } from '../src/openstack/index.ts';
import { call, callOk, ensureNamespace, keepAliveAgent, type Target } from './http.ts';
import { startServerProcess } from './processes.ts';
import { ravenActivity, scrape } from './prom.ts';
import type { RavenProcessOptions } from './raven-process.ts';
import { simApi, startCloud, startRavenProcess, type BenchCloud, type RavenHandle } from './raven-rig.ts';
import { imageNodeFlags } from './raven-memory.ts';
import { VifWatch } from './raven.ts';
import { benchPod, delay } from './support.ts';

export const namespace = 'bench';
const warmUpNamespace = 'bench-warm';
/** The controllers whose queues must be empty for the rig to be settled. */
const controllers = ['pod', 'port-claim', 'port-pool', 'port-refresh'];

/** Raven's default `portPools.min` (the fill a warm-up waits for when the rig gives no sizes). */
const defaultMin = 2;

export interface PoolSizes {
  min: number;
  max: number;
  batch: number;
}

export interface RigOptions {
  cloud: BenchCloud;
  nodes: readonly string[];
  /**
   * Pool sizes per node (unset fields: Raven's defaults); `defaults`: Raven's own, not waited for at the warm-up;
   * undefined: pools off (every pod takes the cold path).
   */
  pools: Partial<PoolSizes> | 'defaults' | undefined;
  limiter: { qps: number; burst: number };
  workers: number;
  /** `vif.keyFile` for Raven: its VIFs signed. */
  vifKeyFile?: string;
  /**
   * The nodes are Nova VMs (simulator only): each a server's port on a network of its own and a Node whose
   * `providerID` names the server; Raven runs with `nested.mode: auto`, so their pods get subports of the VM's trunk.
   */
  vms?: boolean;
}

/** A pod this rig created: its key, uid, and when the create's answer came (this process's clock). */
export interface CreatedPod {
  key: string;
  name: string;
  uid: string;
  createdAt: number;
}

/** The compiled runtime when `npm run build` is newer than every source (as `bin/raven.js` decides), else tsx. */
export function ravenRuntime(): 'dist' | 'src' {
  const root = new URL('../', import.meta.url);
  const built = new URL('dist/src/daemon/compose.js', root);
  if (!existsSync(built)) return 'src';
  const sources = new URL('src/', root);
  let newest = 0;
  for (const file of readdirSync(sources, { recursive: true, encoding: 'utf8' }))
    if (file.endsWith('.ts') && !file.endsWith('.test.ts'))
      newest = Math.max(newest, statSync(new URL(file, sources)).mtimeMs);
  return newest > statSync(built).mtimeMs ? 'src' : 'dist';
}

/**
 * One Nova VM per node, as nested mode finds it: a server's port (`compute:nova`) on a network of VMs; the nodes'
 * `providerID`s. The trunks are Raven's to make (`nested.mode: auto`).
 */
async function makeVms(cloud: RavenProcessOptions['cloud'], nodes: readonly string[]): Promise<Map<string, string>> {
  const session = new OpenStackSession({
    cloud: loadCloudConfig({ cloud: cloud.name, env: { OS_CLIENT_CONFIG_FILE: cloud.cloudsYaml } }),
    timeoutMs: 60_000,
  });
  try {
    const neutron = new NeutronClient(session);
    const vms = await neutron.networks.create({ name: 'bench-vms' });
    await neutron.subnets.create({ network_id: vms.id, cidr: '192.168.100.0/24', ip_version: 4 });
    const out = new Map<string, string>();
    for (const node of nodes) {
      const server = randomUUID();
      await neutron.ports.create({ network_id: vms.id, device_id: server, device_owner: 'compute:nova' });
      out.set(node, `openstack:///${server}`);
    }
    return out;
  } finally {
    await session.close();
  }
}

export class PoolsRig {
  readonly options: RigOptions;
  readonly target: Target;
  readonly agent: Agent;
  readonly watch: VifWatch;
  readonly clusterId: string;
  #raven: RavenHandle;
  readonly #ravenOptions: RavenProcessOptions;
  readonly #simBase: string | undefined;
  readonly #cleanups: (() => Promise<unknown>)[];

  private constructor(
    options: RigOptions,
    parts: {
      target: Target;
      agent: Agent;
      watch: VifWatch;
      raven: RavenHandle;
      ravenOptions: RavenProcessOptions;
      clusterId: string;
      simBase: string | undefined;
      cleanups: (() => Promise<unknown>)[];
    },
  ) {
    this.options = options;
    this.target = parts.target;
    this.agent = parts.agent;
    this.watch = parts.watch;
    this.#raven = parts.raven;
    this.#ravenOptions = parts.ravenOptions;
    this.clusterId = parts.clusterId;
    this.#simBase = parts.simBase;
    this.#cleanups = parts.cleanups;
  }

  /** Starts every process, creates the Nodes and namespaces, and opens the watch. */
  static async start(options: RigOptions, runtime: 'dist' | 'src'): Promise<PoolsRig> {
    const cleanups: (() => Promise<unknown>)[] = [];
    const stopAll = async (): Promise<void> => {
      for (const c of cleanups)
        await c().catch((err: unknown) =>
          process.stderr.write(`\nbench: clean-up: ${err instanceof Error ? err.message : String(err)}\n`),
        );
    };
    try {
      const server = await startServerProcess({ tls: 'none' });
      cleanups.unshift(() => server.stop());
      const target: Target = { url: server.url, token: server.token, caPem: server.caPem };
      const clusterId = options.cloud.kind === 'real' ? `bench-${Date.now().toString(36)}` : 'bench';
      const { cloud, simBase } = await startCloud(options.cloud, clusterId, 8, cleanups);

      const agent = keepAliveAgent(target, 16);
      cleanups.unshift(() => agent.close());
      const providerIds = options.vms ? await makeVms(cloud, options.nodes) : new Map<string, string>();
      for (const node of options.nodes) {
        const providerID = providerIds.get(node);
        const spec = providerID ? { spec: { providerID } } : {};
        await callOk(agent, target, 'POST', '/api/v1/nodes', 201, { metadata: { name: node }, ...spec });
      }
      await ensureNamespace(agent, target, namespace);
      await ensureNamespace(agent, target, warmUpNamespace);
      const watch = new VifWatch();
      cleanups.unshift(() => watch.close());
      await watch.open(target);

      const ravenOptions: RavenProcessOptions = {
        kube: { url: target.url, token: target.token, caPem: target.caPem, ...options.limiter },
        cloud,
        clusterId,
        podCidr: '10.244.0.0/16',
        workers: options.workers,
        logLevel: 'warn',
        ...(options.pools === 'defaults'
          ? {}
          : { pools: options.pools ? { enabled: true, ...options.pools } : { enabled: false } }),
        runtime,
        eventsClient: 'own',
        ...(options.vifKeyFile ? { vifKeyFile: options.vifKeyFile } : {}),
        ...(options.vms ? { nested: true } : {}),
      };
      const raven = await startRavenProcess(ravenOptions, imageNodeFlags());
      const rig = new PoolsRig(options, { target, agent, watch, raven, ravenOptions, clusterId, simBase, cleanups });
      cleanups.unshift(() => rig.raven.stop());
      return rig;
    } catch (err) {
      await stopAll();
      throw err;
    }
  }

  /** The simulator's base URL (its `/_sim/` API); undefined on the real Neutron. */
  get simBase(): string | undefined {
    return this.#simBase;
  }

  /** The controller's connections: the API server and the cloud (the node side connects to the same). */
  get connections(): Pick<RavenProcessOptions, 'kube' | 'cloud'> {
    return { kube: this.#ravenOptions.kube, cloud: this.#ravenOptions.cloud };
  }

  /** The controller's process (a new one after {@link restartRaven}). */
  get raven(): RavenHandle {
    return this.#raven;
  }

  /** Stops the controller the way SIGTERM does (sources stopped, work drained, connections closed). */
  async stopRaven(): Promise<void> {
    await this.#raven.stop();
  }

  /**
   * Starts a new controller on the same API server and cloud (after {@link stopRaven}), with another limiter or other
   * pool sizes if given; resolves once its ops server listens.
   */
  async startRaven(changes: { limiter?: { qps: number; burst: number }; pools?: PoolSizes }): Promise<void> {
    const options = this.#ravenOptions;
    this.#raven = await startRavenProcess(
      {
        ...options,
        kube: { ...options.kube, ...changes.limiter },
        ...(changes.pools ? { pools: { enabled: true, ...changes.pools } } : {}),
      },
      imageNodeFlags(),
    );
  }

  /**
   * One pod per node, unmeasured (the cluster network is made, connections opened; with pools on, each node's pool
   * exists — a pool is made when a pod of its node first wants a port — and is filled to `min`); then settled.
   * Returns how long the pools took to fill, and the fewest free ports a node's pool then has (a fill makes at least
   * `batch`, so it can be above `min`).
   */
  async warmUp(capMs: number): Promise<{ fillMs: number; free: number }> {
    const keys: string[] = [];
    for (const [i, node] of this.options.nodes.entries()) {
      const name = `warm-${i}`;
      await callOk(this.agent, this.target, 'POST', `/api/v1/namespaces/${warmUpNamespace}/pods`, 201, {
        ...benchPod(name),
        spec: { ...(benchPod(name) as { spec: object }).spec, nodeName: node },
      });
      keys.push(`${warmUpNamespace}/${name}`);
    }
    const t0 = performance.now();
    if (!(await this.watch.until(() => keys.every((k) => this.watch.annotatedAt.has(k)), capMs)))
      throw new Error(`the warm-up pods got no VIF within ${capMs / 1000} s`);
    const pools = this.options.pools;
    // Raven's own sizes are its business (they may adapt): settled is filled.
    if (pools && pools !== 'defaults') {
      const filled = await this.#until(async () => {
        const sizes = (await scrape(this.raven.opsUrl)).samples('raven_port_pool_size');
        return this.options.nodes.every((node) => this.#poolSize(sizes, node) >= (pools.min ?? defaultMin));
      }, capMs);
      if (!filled)
        throw new Error(`the pools were not filled to min ${pools.min ?? defaultMin} within ${capMs / 1000} s`);
    }
    const fillMs = performance.now() - t0;
    await this.settle(capMs);
    const sizes = (await scrape(this.raven.opsUrl)).samples('raven_port_pool_size');
    return { fillMs, free: Math.min(...this.options.nodes.map((n) => this.#poolSize(sizes, n))) };
  }

  /** The free ports of `node`'s pools in a scrape of `raven_port_pool_size`. */
  #poolSize(sizes: { labels: Record<string, string>; value: number }[], node: string): number {
    return sizes.filter((s) => s.labels.node === node).reduce((sum, s) => sum + s.value, 0);
  }

  /**
   * Waits until the controller is settled: no key queued or in work in the pod, claim and pool controllers, and no
   * OpenStack request for `quietMs` (the real Neutron answers slowly: longer). Returns how long that took, or throws
   * after `capMs`.
   */
  async settle(capMs: number): Promise<number> {
    const quietMs = this.options.cloud.kind === 'real' ? 3_000 : 1_000;
    const t0 = performance.now();
    let requests = -1;
    let quietSince = performance.now();
    const settled = await this.#until(async () => {
      const { busy, requests: now } = await ravenActivity(this.raven.opsUrl, controllers);
      if (busy || now !== requests) {
        requests = now;
        quietSince = performance.now();
        return false;
      }
      return performance.now() - quietSince >= quietMs;
    }, capMs);
    if (!settled) throw new Error(`the controller did not settle within ${capMs / 1000} s`);
    return performance.now() - t0 - quietMs;
  }

  /** Starts every count afresh: the simulator's, the watch's, and the controller's unless it is stopped. */
  async resetCounts(controller = true): Promise<void> {
    if (this.#simBase) await simApi(this.#simBase, 'DELETE', 'counters');
    if (controller) {
      await this.raven.counts(true);
      await this.raven.claims(true);
    }
    this.watch.resetCounts();
  }

  /**
   * Neutron requests by route since the reset: the simulator's counters (every HTTP request that reached it), or on
   * the real Neutron those counted on Raven's session (one per logical call).
   */
  async neutronCounts(): Promise<{
    counts: Record<string, number>;
    isNeutron: (key: string) => boolean;
    source: string;
  }> {
    if (this.#simBase)
      return {
        counts: (await simApi(this.#simBase, 'GET', 'counters')) as Record<string, number>,
        isNeutron: (k) => k.includes(' /network/'),
        source: "the simulator's counters",
      };
    return {
      counts: await this.raven.counts(false),
      isNeutron: (k) => k.startsWith('network '),
      source: "Raven's session",
    };
  }

  /** Creates a pod on `node` in the benchmark namespace. */
  async createPod(name: string, node: string): Promise<CreatedPod> {
    const base = benchPod(name) as { spec: object };
    const text = await callOk(this.agent, this.target, 'POST', `/api/v1/namespaces/${namespace}/pods`, 201, {
      ...base,
      spec: { ...base.spec, nodeName: node },
    });
    const createdAt = performance.now();
    const uid = (JSON.parse(text) as { metadata: { uid: string } }).metadata.uid;
    return { key: `${namespace}/${name}`, name, uid, createdAt };
  }

  /** Deletes a pod at once (no grace period: no kubelet runs here to end it). */
  async deletePod(name: string): Promise<void> {
    const reply = await call(
      this.agent,
      this.target,
      'DELETE',
      `/api/v1/namespaces/${namespace}/pods/${name}?gracePeriodSeconds=0`,
    );
    if (reply.status !== 200 && reply.status !== 404)
      throw new Error(`delete pod ${name}: HTTP ${reply.status}: ${reply.text.slice(0, 300)}`);
  }

  async stop(): Promise<void> {
    for (const c of this.#cleanups)
      await c().catch((err: unknown) =>
        process.stderr.write(`\nbench: clean-up: ${err instanceof Error ? err.message : String(err)}\n`),
      );
  }

  async #until(done: () => Promise<boolean>, capMs: number): Promise<boolean> {
    const stopAt = performance.now() + capMs;
    while (!(await done())) {
      if (performance.now() >= stopAt) return false;
      await delay(100);
    }
    return true;
  }
}
