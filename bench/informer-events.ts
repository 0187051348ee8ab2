/**
 * Events/s through an informer. A writer child process creates ConfigMaps and then updates each a few times on a
 * server child process, while this process runs one consumer alone on its event loop: Raven's informer → work queue →
 * no-op reconcile (`Controller`), Raven's informer with a handler only, or @kubernetes/client-node's informer. Done
 * is when every object's final resourceVersion has been seen (by a reconcile, or by a handler).
 */
import * as k8s from '@kubernetes/client-node';
import { performance } from 'node:perf_hooks';
import { Controller } from '../src/controller/index.ts';
import type { DeepReadonly } from '../src/core/index.ts';
import type { KubeObject } from '../src/kube/api/index.ts';
import { SharedInformerFactory } from '../src/kube/cache/index.ts';
import { resources } from '../src/kube/client/index.ts';
import type { Target } from './http.ts';
import { clientNodeConfig, ravenClient } from './kube-clients.ts';
import { startServerProcess } from './processes.ts';
import { delay, epochMs, fmtInt, fmtMs, type Row } from './support.ts';
import { startWriterProcess, type Written } from './writer.ts';

export type Consumer = { kind: 'controller'; workers: number } | { kind: 'informer' } | { kind: 'client-node' };

export interface EventsOptions {
  consumer: Consumer;
  objects: number;
  /** Updates per object after its create. */
  updates: number;
  /** Writes in flight from the writer process. */
  concurrency: number;
  /** Hard cap on the measured writes; convergence then gets at most `convergeCapMs`. */
  capMs: number;
  convergeCapMs: number;
}

/** What one condition measured, also used for the Raven vs client-node ratio row. */
export interface EventsResult {
  rows: Row[];
  eventsPerSec: number;
  lagMs: number;
  cpuUsPerEvent: number;
}

const namespace = 'bench';
const warmObjects = 500;

/** Counts what the consumer saw; times are {@link epochMs}, comparable with the writer's. */
class Tracker {
  events = 0;
  reconciles = 0;
  firstEvent = Number.NaN;
  lastEvent = Number.NaN;
  firstReconcile = Number.NaN;
  lastReconcile = Number.NaN;
  /** Per object name: the highest resourceVersion seen and when it was first seen. */
  readonly seen = new Map<string, { rv: number; at: number }>();

  event(): void {
    const now = epochMs();
    if (this.events++ === 0) this.firstEvent = now;
    this.lastEvent = now;
  }

  reconcile(): void {
    const now = epochMs();
    if (this.reconciles++ === 0) this.firstReconcile = now;
    this.lastReconcile = now;
  }

  observe(name: string | undefined, rv: string | undefined): void {
    if (!name || !rv) return;
    const n = Number(rv);
    const s = this.seen.get(name);
    if (!s || n > s.rv) this.seen.set(name, { rv: n, at: epochMs() });
  }

  reset(): void {
    this.events = this.reconciles = 0;
    this.firstEvent = this.lastEvent = this.firstReconcile = this.lastReconcile = Number.NaN;
  }
}

/** Starts the consumer and resolves once its cache has synced; the returned function stops it. */
async function startConsumer(consumer: Consumer, target: Target, tracker: Tracker): Promise<() => Promise<void>> {
  if (consumer.kind === 'client-node') {
    const kc = clientNodeConfig(target);
    const api = kc.makeApiClient(k8s.CoreV1Api);
    const informer = k8s.makeInformer(kc, `/api/v1/namespaces/${namespace}/configmaps`, () =>
      api.listNamespacedConfigMap({ namespace }),
    );
    const seen = (cm: k8s.V1ConfigMap): void => {
      tracker.event();
      tracker.observe(cm.metadata?.name, cm.metadata?.resourceVersion);
    };
    let stopping = false;
    informer.on('add', seen);
    informer.on('update', seen);
    // client-node's informer stops for good on an error: say so instead of waiting for the cap. Its own stop()
    // reports an AbortError here too, hence `stopping`.
    informer.on('error', (err: unknown) => stopping || console.error('bench: client-node informer error:', err));
    await informer.start();
    return () => {
      stopping = true;
      return informer.stop();
    };
  }
  const client = ravenClient(target);
  const factory = new SharedInformerFactory({ client });
  const informer = factory.informerFor<KubeObject>(resources.configmaps, { namespace });
  const lister = informer.lister();
  const onObject = (obj: DeepReadonly<KubeObject>): void => {
    tracker.event();
    // With a controller, "seen" is what a reconcile read from the lister, not what a handler got.
    if (consumer.kind === 'informer') tracker.observe(obj.metadata.name, obj.metadata.resourceVersion);
  };
  informer.addEventHandler({ onAdd: onObject, onUpdate: (_old, obj) => onObject(obj) });
  const stop = new AbortController();
  const running = factory.start(stop.signal);
  if (!(await factory.waitForCacheSync(AbortSignal.any([stop.signal, AbortSignal.timeout(30_000)]))))
    throw new Error('informer did not sync within 30 s');
  let controllerDone: Promise<void> = Promise.resolve();
  if (consumer.kind === 'controller') {
    const controller = new Controller({
      name: 'bench',
      for: informer,
      workers: consumer.workers,
      reconcile: (key) => {
        tracker.reconcile();
        const obj = lister.get(key);
        tracker.observe(obj?.metadata.name, obj?.metadata.resourceVersion);
        return Promise.resolve();
      },
    });
    controllerDone = controller.start(stop.signal);
  }
  return async () => {
    stop.abort();
    await controllerDone;
    await running;
    await client.close();
  };
}

/** Waits until every `<prefix>-<i>` has been seen at its final resourceVersion; returns when the last one was. */
async function converge(
  tracker: Tracker,
  prefix: string,
  written: Written,
  capMs: number,
): Promise<{ pending: number; lastAt: number }> {
  const stopAt = performance.now() + capMs;
  for (;;) {
    let pending = 0;
    let lastAt = Number.NEGATIVE_INFINITY;
    written.finalVersions.forEach((rv, i) => {
      if (!rv) return;
      const s = tracker.seen.get(`${prefix}-${i}`);
      if (!s || s.rv < Number(rv)) pending++;
      else lastAt = Math.max(lastAt, s.at);
    });
    if (pending === 0 || performance.now() >= stopAt) return { pending, lastAt };
    await delay(2);
  }
}

function describeConsumer(consumer: Consumer): string {
  if (consumer.kind === 'controller')
    return `Raven Controller (SharedInformer → work queue → no-op reconcile), workers=${consumer.workers}`;
  return consumer.kind === 'informer'
    ? 'Raven SharedInformer, one counting handler'
    : '@kubernetes/client-node 1.4.0 makeInformer, one counting handler';
}

export async function benchInformerEvents(options: EventsOptions): Promise<EventsResult> {
  const server = await startServerProcess({ tls: 'self-signed' });
  let writer: Awaited<ReturnType<typeof startWriterProcess>> | undefined;
  let stopConsumer: (() => Promise<void>) | undefined;
  try {
    writer = await startWriterProcess({ ...server, namespace, concurrency: options.concurrency });
    const tracker = new Tracker();
    stopConsumer = await startConsumer(options.consumer, server, tracker);
    // Unmeasured: warms the server, the writer and this process's informer path (JIT) on the same kind of writes.
    const warm = await writer.write('warm', warmObjects, 1, 10_000);
    await converge(tracker, 'warm', warm, 10_000);
    tracker.reset();

    const cpu0 = process.cpuUsage();
    const written = await writer.write('cm', options.objects, options.updates, options.capMs);
    const { pending, lastAt } = await converge(tracker, 'cm', written, options.convergeCapMs);
    const cpu = process.cpuUsage(cpu0);
    const writes = written.creates + written.updates;
    const eventsPerSec = (tracker.events / (tracker.lastEvent - tracker.firstEvent)) * 1000;
    const lagMs = pending === 0 ? Math.max(0, lastAt - written.lastWriteAt) : Number.NaN;
    const cpuUsPerEvent = (cpu.user + cpu.system) / tracker.events;
    const capped = writes < options.objects * (1 + options.updates) ? ` (write cap hit: ${fmtInt(writes)} writes)` : '';
    const done =
      pending === 0
        ? `${fmtMs(lagMs)} after the last write`
        : `NOT reached: ${fmtInt(pending)} objects short after ${fmtMs(options.convergeCapMs)}`;
    const condition = `${describeConsumer(options.consumer)}; ${fmtInt(options.objects)} ConfigMaps × (create + ${options.updates} updates) = ${fmtInt(options.objects * (1 + options.updates))} writes${capped}`;
    const writeRate = `writer: ${fmtInt((writes / written.elapsedMs) * 1000)} writes/s`;
    let result: string;
    if (options.consumer.kind === 'controller') {
      const reconcilesPerSec = (tracker.reconciles / (tracker.lastReconcile - tracker.firstReconcile)) * 1000;
      result =
        `${fmtInt(tracker.events)} events at ${fmtInt(eventsPerSec)}/s → ${fmtInt(tracker.reconciles)} reconciles at ${fmtInt(reconcilesPerSec)}/s ` +
        `(${(tracker.reconciles / tracker.events).toFixed(2)} reconciles/event); every final resourceVersion reconciled ${done}; ` +
        `${cpuUsPerEvent.toFixed(0)} µs CPU/event; ${writeRate}`;
    } else {
      result = `${fmtInt(tracker.events)} events at ${fmtInt(eventsPerSec)}/s; every final resourceVersion seen ${done}; ${cpuUsPerEvent.toFixed(0)} µs CPU/event; ${writeRate}`;
    }
    return { rows: [{ benchmark: 'informer events/s', condition, result }], eventsPerSec, lagMs, cpuUsPerEvent };
  } finally {
    await stopConsumer?.();
    await writer?.stop();
    await server.stop();
  }
}
