/**
 * Watch fan-out latency: N watch streams held by this process, then sequential ConfigMap creates; for each write,
 * every watcher's receive time minus the write's send time (`performance.now()`, one process, one clock). The next
 * write is sent only once every watcher has its event, so events never overlap.
 */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import { callOk, ensureNamespace, keepAliveAgent, type Target } from './http.ts';
import { startServerProcess } from './processes.ts';
import { benchConfigMap, fmtInt, fmtMs, percentile, runPool, type Row } from './support.ts';

export interface FanoutOptions {
  watchers: number;
  writes: number;
  /** Hard cap on the measured writes. */
  capMs: number;
  /** Longest wait for one event to reach every watcher before giving up on it. */
  perWriteTimeoutMs: number;
}

const namespace = 'fanout';

interface Round {
  sentAt: number;
  /** Lines each watcher must have seen for this round's event to have arrived. */
  expected: number;
  pending: number;
  received: number[];
  done: () => void;
}

/** Opens the watches; each calls `onLines` with its own new line count on every chunk. */
async function openWatches(
  target: Target,
  agent: Agent,
  count: number,
  onLines: (total: number) => void,
): Promise<void> {
  const open = async (): Promise<void> => {
    const { statusCode, body } = await request(`${target.url}/api/v1/namespaces/${namespace}/configmaps?watch=true`, {
      headers: { authorization: `Bearer ${target.token}`, accept: 'application/json' },
      dispatcher: agent,
    });
    if (statusCode !== 200) throw new Error(`watch: HTTP ${statusCode} ${await body.text()}`);
    let lines = 0;
    body.on('data', (chunk: Buffer) => {
      let n = 0;
      for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) n++;
      if (n === 0) return;
      lines += n;
      onLines(lines);
    });
    body.on('error', () => undefined);
  };
  for (let i = 0; i < count; i += 50) await Promise.all(Array.from({ length: Math.min(50, count - i) }, open));
}

export async function benchFanout(options: FanoutOptions): Promise<Row[]> {
  const server = await startServerProcess({ tls: 'none' });
  const writer = keepAliveAgent(server, 1);
  const watchAgent = new Agent({ bodyTimeout: 0, headersTimeout: 30_000 });
  try {
    await ensureNamespace(writer, server, namespace);
    await ensureNamespace(writer, server, 'warmup');
    await runPool(300, 1, 10_000, async (i) => {
      await callOk(writer, server, 'POST', '/api/v1/namespaces/warmup/configmaps', 201, benchConfigMap(`warm-${i}`));
    });

    let round: Round | undefined;
    await openWatches(server, watchAgent, options.watchers, (total) => {
      const now = performance.now();
      if (!round || total !== round.expected) return;
      round.received.push(now - round.sentAt);
      if (--round.pending === 0) round.done();
    });

    const all: number[] = [];
    const slowest: number[] = [];
    const responses: number[] = [];
    let lost = 0;
    let sent = 0;
    const stopAt = performance.now() + options.capMs;
    for (let i = 0; i < options.writes && performance.now() < stopAt; i++) {
      let finish!: () => void;
      const arrived = new Promise<void>((resolve) => (finish = resolve));
      const current: Round = {
        sentAt: performance.now(),
        expected: i + 1,
        pending: options.watchers,
        received: [],
        done: finish,
      };
      round = current;
      await callOk(
        writer,
        server,
        'POST',
        `/api/v1/namespaces/${namespace}/configmaps`,
        201,
        benchConfigMap(`cm-${i}`),
      );
      responses.push(performance.now() - current.sentAt);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        arrived,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, options.perWriteTimeoutMs))),
      ]);
      clearTimeout(timer);
      round = undefined;
      sent++;
      lost += current.pending;
      all.push(...current.received);
      slowest.push(current.pending === 0 ? Math.max(...current.received) : Number.POSITIVE_INFINITY);
    }

    const condition = `${fmtInt(options.watchers)} watcher${options.watchers === 1 ? '' : 's'}, ${fmtInt(sent)} sequential writes`;
    const missing = lost > 0 ? `; ${fmtInt(lost)} deliveries missed the ${fmtMs(options.perWriteTimeoutMs)} wait` : '';
    return [
      {
        benchmark: 'watch fan-out latency',
        condition,
        result:
          `every delivery p50 ${fmtMs(percentile(all, 50))}, p99 ${fmtMs(percentile(all, 99))}; ` +
          `last watcher p50 ${fmtMs(percentile(slowest, 50))}, p99 ${fmtMs(percentile(slowest, 99))}; ` +
          `write response p50 ${fmtMs(percentile(responses, 50))}${missing}`,
      },
    ];
  } finally {
    await watchAgent.destroy();
    await writer.close();
    await server.stop();
  }
}
