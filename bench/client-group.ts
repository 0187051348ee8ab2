/**
 * The `client` benchmark group (issue 3): Raven's informers and controller against a benchmark server, and
 * @kubernetes/client-node 1.4.0's informer side by side on the same server and objects.
 */
import { benchInformerEvents, type EventsOptions } from './informer-events.ts';
import { benchInformerMemory } from './informer-memory.ts';
import type { Row } from './support.ts';

export type Step = (name: string, run: () => Promise<Row[]>) => Promise<void>;

const writes: Omit<EventsOptions, 'consumer'> = {
  objects: 2_000,
  updates: 5,
  concurrency: 16,
  capMs: 20_000,
  convergeCapMs: 10_000,
};

export async function runClientGroup(step: Step): Promise<void> {
  for (const workers of [1, 4]) {
    await step(
      `informer → queue → reconcile, workers=${workers}`,
      async () => (await benchInformerEvents({ ...writes, consumer: { kind: 'controller', workers } })).rows,
    );
  }
  await step('informer events/s, Raven vs client-node', async () => {
    const raven = await benchInformerEvents({ ...writes, consumer: { kind: 'informer' } });
    const other = await benchInformerEvents({ ...writes, consumer: { kind: 'client-node' } });
    const ratio = (a: number, b: number): string => (Number.isFinite(a / b) ? `${(a / b).toFixed(2)}×` : 'n/a');
    return [
      ...raven.rows,
      ...other.rows,
      {
        benchmark: 'informer events/s',
        condition: 'Raven ÷ client-node, the two rows above',
        result: `events/s ${ratio(raven.eventsPerSec, other.eventsPerSec)} (both follow the writer); CPU/event ${ratio(raven.cpuUsPerEvent, other.cpuUsPerEvent)}`,
      },
    ];
  });
  await step('informer memory and initial sync', () =>
    benchInformerMemory({ pods: 10_000, repeats: 3, capMs: 45_000 }),
  );
}

export const clientNotes = [
  "- client group: every server runs with `tls: 'self-signed'` and both clients get the same CA and bearer token (client-node refuses plain http unless `skipTLSVerify` is set). Raven's client limiter is set out of the way (qps and burst 10⁶).",
  `- informer events/s: three processes: the server; a writer (undici, ${writes.concurrency} writes in flight: creates, then rounds of PUT updates carrying the previous resourceVersion); and this one, running only the consumer. Each row has a fresh server and 500 unmeasured objects (create + 1 update) through the same consumer first. events/s is the rate of handler calls between the first and the last, so it follows the writer's rate (printed beside it); µs CPU/event (this process's user + system CPU over the measured writes ÷ events) is the consumer's cost. "after the last write" runs from the writer's reply to its last write until the last object's final resourceVersion was read from the lister by a reconcile (Controller) or handed to the handler (the processes share one wall clock; 0 = before the writer had its reply). reconciles/event below 1 means the work queue coalesced events of one key; above 1, some events cost more than one reconcile.`,
  "- client-node 1.4.0's informer lists without pagination (one LIST for everything), watches without bookmarks or `timeoutSeconds`, stops for good on a watch error (no relist or backoff), and reports its own `stop()` to its error handlers as an AbortError. What its LIST returns is deserialized into the generated model classes (V1Pod, with Date fields); what its watch delivers stays parsed JSON.",
  "- informer memory: heapUsed after forced GCs (repeated while it still falls: a stopped client-node informer stays reachable for a moment), after − before one fresh informer syncs, ÷ pods; median over fresh informers, variants interleaved. It counts the informer's cache, indexes and connections. The trim keeps metadata name/namespace/uid/resourceVersion/labels/annotations/deletionTimestamp/finalizers/ownerReferences, spec.nodeName/hostNetwork, status.phase/podIP/podIPs/hostIP. Initial sync runs from start until the cache holds every pod (Raven: `waitForCacheSync`; client-node: its last initial `add`).",
];
