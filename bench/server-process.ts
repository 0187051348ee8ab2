/**
 * Child-process entry: the API server alone in its own process and event loop, so the load generator and the watch
 * readers do not share its CPU time slice. Started by `startServerProcess` (processes.ts); talks over the IPC channel.
 */
import { runApiServer } from '@raven/dev';
import type { ServerCommand, ServerOptions, ServerReply } from './processes.ts';
import { benchPod, runningStatus } from './support.ts';

const options = JSON.parse(process.argv[2] ?? '{}') as ServerOptions;
const server = await runApiServer({
  host: '127.0.0.1',
  port: 0,
  tls: options.tls,
  ...(options.historyLimit !== undefined ? { historyLimit: options.historyLimit } : {}),
});

function reply(message: ServerReply): void {
  process.send?.(message);
}

/** Fills a namespace with running pods in-process (set-up for the list benchmark, not measured). */
async function seedPods(namespace: string, count: number): Promise<void> {
  const headers = { authorization: `Bearer ${server.token}`, 'content-type': 'application/json' };
  const base = `http://bench/api/v1/namespaces/${namespace}`;
  await server.app.fetch(
    new Request('http://bench/api/v1/namespaces', {
      method: 'POST',
      headers,
      body: JSON.stringify({ metadata: { name: namespace } }),
    }),
  );
  for (let i = 0; i < count; i++) {
    const name = `pod-${String(i).padStart(5, '0')}`;
    const created = await server.app.fetch(
      new Request(`${base}/pods`, { method: 'POST', headers, body: JSON.stringify(benchPod(name)) }),
    );
    if (created.status !== 201) throw new Error(`seed create ${name}: ${created.status} ${await created.text()}`);
    const pod = (await created.json()) as Record<string, unknown>;
    const updated = await server.app.fetch(
      new Request(`${base}/pods/${name}/status`, {
        method: 'PUT',
        headers,
        body: JSON.stringify({ ...pod, status: runningStatus(i) }),
      }),
    );
    if (updated.status !== 200) throw new Error(`seed status ${name}: ${updated.status} ${await updated.text()}`);
  }
}

process.on('message', (raw) => {
  const command = raw as ServerCommand;
  void (async () => {
    switch (command.type) {
      case 'seed-pods':
        await seedPods(command.namespace, command.count);
        reply({ type: 'seeded', resourceVersion: server.app.store.currentRv });
        break;
      case 'stats':
        reply({
          type: 'stats',
          openWatches: server.app.hub.stats.open,
          closedTooSlow: server.app.hub.stats.closedTooSlow,
          rssBytes: process.memoryUsage().rss,
        });
        break;
      case 'close':
        await server.close();
        process.disconnect();
        break;
    }
  })().catch((err: unknown) => {
    console.error('bench server process:', err);
    process.exit(1);
  });
});

// The parent went away (crashed or was killed): do not linger.
process.on('disconnect', () => {
  void server.close().finally(() => process.exit(0));
});

reply({ type: 'ready', url: server.url, token: server.token, caPem: server.caPem ?? null });
