/**
 * Memory per stored object, in-process (no HTTP): N pods created through `app.fetch`, each then given a running
 * status (`PUT …/status`, as a kubelet does), and the V8 heap compared before and after with forced GCs. The history
 * window keeps each event's object and previous state alive too, so it is measured with the default window and with
 * `historyLimit: 1` (the store alone).
 */
import { performance } from 'node:perf_hooks';
import { createApiServer, defaultApiServerOptions } from '@raven/apiserver';
import { benchPod, fmtBytes, fmtInt, runningStatus, type Row } from './support.ts';

export interface MemoryOptions {
  pods: number;
  historyLimit: number;
  /** Hard cap: stop creating pods after this long and measure what was stored. */
  capMs: number;
}

function collect(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc (npm run bench does)');
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

interface Filled {
  stored: number;
  heapBefore: number;
  heapAfter: number;
  podBytes: number;
  historyEvents: number;
}

/**
 * Fills a fresh app; the heap is measured with the app (and its bootstrap objects) already made, so only pods count.
 */
async function fill(options: MemoryOptions): Promise<Filled> {
  const token = 'bench';
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const base = 'http://bench/api/v1/namespaces/default/pods';
  const app = createApiServer({ ...defaultApiServerOptions, historyLimit: options.historyLimit, token });
  try {
    const heapBefore = collect();
    const stopAt = performance.now() + options.capMs;
    let stored = 0;
    for (let i = 0; i < options.pods && performance.now() < stopAt; i++) {
      const name = `pod-${String(i).padStart(5, '0')}`;
      const created = await app.fetch(
        new Request(base, { method: 'POST', headers, body: JSON.stringify(benchPod(name)) }),
      );
      if (created.status !== 201) throw new Error(`create ${name}: ${created.status} ${await created.text()}`);
      const pod = (await created.json()) as Record<string, unknown>;
      const updated = await app.fetch(
        new Request(`${base}/${name}/status`, {
          method: 'PUT',
          headers,
          body: JSON.stringify({ ...pod, status: runningStatus(i) }),
        }),
      );
      if (updated.status !== 200) throw new Error(`status ${name}: ${updated.status} ${await updated.text()}`);
      await updated.arrayBuffer();
      stored++;
    }
    const heapAfter = collect();
    const podBytes = Buffer.byteLength(JSON.stringify(app.store.get('/pods', 'default', 'pod-00000')));
    return { stored, heapBefore, heapAfter, podBytes, historyEvents: app.store.historySize };
  } finally {
    app.close();
  }
}

export async function benchMemory(options: MemoryOptions): Promise<Row[]> {
  const { stored, heapBefore, heapAfter, podBytes, historyEvents } = await fill(options);
  const perPod = (heapAfter - heapBefore) / stored;
  const window =
    options.historyLimit === 1 ? 'historyLimit 1 (store only)' : `default historyLimit ${fmtInt(options.historyLimit)}`;
  return [
    {
      benchmark: 'memory per stored pod',
      condition: `${fmtInt(stored)} running pods (create + status update), ${window}; history holds ${fmtInt(historyEvents)} event${historyEvents === 1 ? '' : 's'}`,
      result: `${fmtInt(perPod)} B/pod heap (${fmtBytes(heapAfter - heapBefore)} total); one pod is ${fmtInt(podBytes)} B of JSON → ${(perPod / podBytes).toFixed(1)}× overhead`,
    },
  ];
}
