/**
 * Informer memory and initial sync: N running pods seeded in one namespace of a server child process; in this
 * process a fresh informer lists (then watches) them and the heap is compared before and after, with forced GCs.
 * Raven's SharedInformer (pages of 500) keeps deep-frozen plain objects, whole or trimmed by a `transform`;
 * @kubernetes/client-node 1.4.0's informer lists in one unpaged request and keeps what its generated API returns.
 */
import * as k8s from '@kubernetes/client-node';
import { performance } from 'node:perf_hooks';
import type { KubeObject } from '../src/kube/api/index.ts';
import { SharedInformerFactory } from '../src/kube/cache/index.ts';
import { resources } from '../src/kube/client/index.ts';
import type { Target } from './http.ts';
import { clientNodeConfig, ravenClient, trimPod } from './kube-clients.ts';
import { startServerProcess } from './processes.ts';
import { delay, fmtBytes, fmtInt, fmtMs, heapAfterGc, percentile, type Row } from './support.ts';

export interface InformerMemoryOptions {
  pods: number;
  /** Fresh informers per variant (fewer if the cap is hit); results are medians. */
  repeats: number;
  /** Hard cap on the sampling (seeding the server has its own 90 s timeout). */
  capMs: number;
}

const namespace = 'informer';
const syncTimeoutMs = 30_000;

interface Sample {
  syncMs: number;
  bytes: number;
  cached: number;
  /** The constructor of a cached object (client-node: a generated model class). */
  shape: string;
}

/**
 * The heap once the previous sample is gone: a stopped informer can stay reachable for a moment (client-node's until
 * its aborted watch socket closes), so collect again while that still frees more than 1 MiB.
 */
async function settledHeap(): Promise<number> {
  let heap = heapAfterGc();
  for (let i = 0; i < 20; i++) {
    await delay(50);
    const now = heapAfterGc();
    if (now > heap - 1024 * 1024) return now;
    heap = now;
  }
  return heap;
}

type Variant = 'raven' | 'raven-trimmed' | 'client-node';

/** Everything is constructed before the baseline, so the heap delta is the cache plus the connections' state. */
async function sampleRaven(target: Target, trimmed: boolean): Promise<Sample> {
  const client = ravenClient(target);
  const factory = new SharedInformerFactory({ client });
  const informer = factory.informerFor<KubeObject>(resources.pods, {
    namespace,
    ...(trimmed ? { transform: trimPod } : {}),
  });
  const stop = new AbortController();
  const before = await settledHeap();
  const t0 = performance.now();
  const running = factory.start(stop.signal);
  try {
    if (!(await factory.waitForCacheSync(AbortSignal.any([stop.signal, AbortSignal.timeout(syncTimeoutMs)]))))
      throw new Error(`Raven informer did not sync within ${syncTimeoutMs} ms`);
    const syncMs = performance.now() - t0;
    const bytes = (await settledHeap()) - before;
    const cached = informer.lister().list();
    return { syncMs, bytes, cached: cached.length, shape: cached[0]?.constructor.name ?? '' };
  } finally {
    stop.abort();
    await running;
    await client.close();
  }
}

async function sampleClientNode(target: Target, pods: number): Promise<Sample> {
  const kc = clientNodeConfig(target);
  const api = kc.makeApiClient(k8s.CoreV1Api);
  const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/pods`, () =>
    api.listNamespacedPod({ namespace }),
  );
  let added = 0;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  // Synced = the pods are in its cache (it fires `add` for each listed object); `start()` also waits for the watch.
  const synced = new Promise<void>((resolve, reject) => {
    informer.on('add', () => ++added === pods && resolve());
    informer.on('error', (err: unknown) => stopping || reject(err instanceof Error ? err : new Error(String(err))));
    timer = setTimeout(
      () => reject(new Error(`client-node informer did not sync within ${syncTimeoutMs} ms`)),
      syncTimeoutMs,
    );
  });
  const before = await settledHeap();
  const t0 = performance.now();
  const started = informer.start();
  try {
    await synced;
    const syncMs = performance.now() - t0;
    await started;
    const bytes = (await settledHeap()) - before;
    const cached = informer.list(namespace);
    return { syncMs, bytes, cached: cached.length, shape: cached[0]?.constructor.name ?? '' };
  } finally {
    clearTimeout(timer);
    stopping = true;
    await informer.stop();
  }
}

function median(samples: Sample[], pick: (s: Sample) => number): number {
  return percentile(samples.map(pick), 50);
}

export async function benchInformerMemory(options: InformerMemoryOptions): Promise<Row[]> {
  const server = await startServerProcess({ tls: 'self-signed' });
  try {
    await server.seedPods(namespace, options.pods, 90_000);
    const probe = ravenClient(server);
    const pod = await probe.get(resources.pods, 'pod-00000', namespace);
    const podJson = Buffer.byteLength(JSON.stringify(pod));
    const managedJson = Buffer.byteLength(JSON.stringify(pod.metadata.managedFields ?? []));
    await probe.close();

    const samples: Record<Variant, Sample[]> = { raven: [], 'raven-trimmed': [], 'client-node': [] };
    const stopAt = performance.now() + options.capMs;
    // Interleaved, so drift in the machine's load touches every variant alike.
    for (let i = 0; i < options.repeats && (i === 0 || performance.now() < stopAt); i++) {
      samples.raven.push(await sampleRaven(server, false));
      samples['raven-trimmed'].push(await sampleRaven(server, true));
      samples['client-node'].push(await sampleClientNode(server, options.pods));
    }
    const perPod = (v: Variant): number => median(samples[v], (s) => s.bytes) / options.pods;
    const sync = (v: Variant): number => median(samples[v], (s) => s.syncMs);
    const check = (v: Variant): string =>
      samples[v].every((s) => s.cached === options.pods)
        ? ''
        : ` (cached ${fmtInt(samples[v][0]!.cached)} of ${fmtInt(options.pods)}!)`;
    const heap = (v: Variant): string =>
      `${fmtInt(perPod(v))} B/pod heap (${fmtBytes(perPod(v) * options.pods)} total)${check(v)}`;
    const n = samples.raven.length;
    const pods = `${fmtInt(options.pods)} running pods in one namespace (one is ${fmtInt(podJson)} B of JSON, ${fmtInt(managedJson)} B of it managedFields); median of ${n} fresh informer${n === 1 ? '' : 's'}`;
    const clientNodeShape = samples['client-node'][0]!.shape;
    return [
      {
        benchmark: 'informer memory per cached pod',
        condition: `Raven SharedInformer, whole objects; ${pods}`,
        result: heap('raven'),
      },
      {
        benchmark: 'informer memory per cached pod',
        condition: 'Raven SharedInformer, `transform` trimming to the fields Raven reads; same pods',
        result: `${heap('raven-trimmed')}; ${(perPod('raven') / perPod('raven-trimmed')).toFixed(1)}× less than whole objects`,
      },
      {
        benchmark: 'informer memory per cached pod',
        condition: `@kubernetes/client-node 1.4.0 makeInformer, whole objects (cached as ${clientNodeShape || 'unknown'} instances); same pods`,
        result: `${heap('client-node')}; ${(perPod('client-node') / perPod('raven')).toFixed(2)}× Raven whole, ${(perPod('client-node') / perPod('raven-trimmed')).toFixed(1)}× Raven trimmed`,
      },
      {
        benchmark: 'informer initial sync',
        condition: `Raven SharedInformer, LIST in pages of 500, whole objects; ${pods}`,
        result: fmtMs(sync('raven')),
      },
      {
        benchmark: 'informer initial sync',
        condition: 'Raven SharedInformer, pages of 500, trimmed by `transform`; same pods',
        result: fmtMs(sync('raven-trimmed')),
      },
      {
        benchmark: 'informer initial sync',
        condition: '@kubernetes/client-node 1.4.0 makeInformer, one unpaged LIST; same pods',
        result: `${fmtMs(sync('client-node'))}; Raven whole ÷ client-node: ${(sync('raven') / sync('client-node')).toFixed(2)}×`,
      },
    ];
  } finally {
    await server.stop();
  }
}
