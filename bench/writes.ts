/**
 * Writes/s: ConfigMap creates, then updates of each (PUT with the resourceVersion from its create, as a controller
 * would), `concurrency` in flight over a keep-alive pool, while W watch streams on the same resource (read by a
 * separate child process) receive every event.
 */
import { keepAliveAgent, callOk, ensureNamespace, resourceVersionOf } from './http.ts';
import { startServerProcess, startWatchProcess, type WatchProcess } from './processes.ts';
import { benchConfigMap, fmtInt, fmtMs, fmtRate, runPool, type Row } from './support.ts';

export interface WritesOptions {
  watchers: number;
  tls: 'none' | 'self-signed';
  /** Creates (and then as many updates) per condition. */
  count: number;
  concurrency: number;
  /** Hard cap on each of the create and update phases. */
  phaseCapMs: number;
}

const namespace = 'bench';
/** Creates and updates, unmeasured, before each condition: each condition gets a fresh server process. */
const warmUp = 2_000;

export async function benchWrites(options: WritesOptions): Promise<Row[]> {
  const server = await startServerProcess({ tls: options.tls });
  const agent = keepAliveAgent(server, options.concurrency);
  let watchers: WatchProcess | undefined;
  try {
    await ensureNamespace(agent, server, namespace);
    await ensureNamespace(agent, server, 'warmup');
    // Warm the JIT of both paths in a namespace the watchers do not see.
    const warm = new Array<string>(warmUp);
    await runPool(warmUp, options.concurrency, 10_000, async (i) => {
      warm[i] = resourceVersionOf(
        await callOk(agent, server, 'POST', '/api/v1/namespaces/warmup/configmaps', 201, benchConfigMap(`warm-${i}`)),
      );
    });
    await runPool(warmUp, options.concurrency, 10_000, async (i) => {
      await callOk(
        agent,
        server,
        'PUT',
        `/api/v1/namespaces/warmup/configmaps/warm-${i}`,
        200,
        benchConfigMap(`warm-${i}`, 1, warm[i]),
      );
    });
    if (options.watchers > 0) {
      watchers = await startWatchProcess({
        ...server,
        path: `/api/v1/namespaces/${namespace}/configmaps?watch=true`,
        count: options.watchers,
      });
    }

    const base = `/api/v1/namespaces/${namespace}/configmaps`;
    const versions = new Array<string>(options.count);
    const creates = await runPool(options.count, options.concurrency, options.phaseCapMs, async (i) => {
      versions[i] = resourceVersionOf(await callOk(agent, server, 'POST', base, 201, benchConfigMap(`cm-${i}`)));
    });
    const updates = await runPool(creates.done, options.concurrency, options.phaseCapMs, async (i) => {
      await callOk(agent, server, 'PUT', `${base}/cm-${i}`, 200, benchConfigMap(`cm-${i}`, 1, versions[i]));
    });

    const condition = `${options.watchers} watchers${options.tls === 'none' ? '' : ', HTTPS (self-signed)'}`;
    let delivery = '';
    if (watchers) {
      const events = creates.done + updates.done;
      const drained = await watchers.drain(events, 30_000);
      const stats = await server.stats();
      delivery =
        drained.minLines >= events
          ? `; every watcher got all ${fmtInt(events)} events, the last ${fmtMs(drained.waitedMs)} after the last write`
          : `; slowest watcher got ${fmtInt(drained.minLines)} of ${fmtInt(events)} events (${stats.closedTooSlow} closed as too slow)`;
    }
    return [
      { benchmark: 'writes/s: create ConfigMap', condition, result: fmtRate(creates, 'creates') },
      { benchmark: 'writes/s: update ConfigMap', condition, result: `${fmtRate(updates, 'updates')}${delivery}` },
    ];
  } finally {
    await watchers?.stop();
    await agent.close();
    await server.stop();
  }
}
