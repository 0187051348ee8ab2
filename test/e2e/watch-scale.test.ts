/**
 * 1,000 concurrent watch streams on one resource, over real HTTPS connections (HTTP/1.1: one connection per
 * stream), each of which must receive every write, in resourceVersion order.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import { Agent } from 'undici';
import { configMap, createNamespace, ok, requester, rv } from '../support/api.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { openWatch, type Requester, type WatchStream } from '../support/watch.ts';

const WATCHERS = 1_000;
const WRITES = 20;

describe('1,000 watchers', { timeout: 90_000 }, () => {
  let server: TestServer;
  let agent: Agent;
  let client: Requester;
  const watches: WatchStream[] = [];

  before(async () => {
    server = await startTestServer();
    agent = new Agent({ connect: { ca: server.caPem }, connections: WATCHERS + 10, pipelining: 1 });
    client = requester(server.url, server.token, agent);
  });
  after(async () => {
    for (const w of watches) w.close();
    await Promise.allSettled(watches.map((w) => w.done));
    await agent.destroy();
    await server.stop();
  });

  it('every watcher receives all 20 events, in resourceVersion order', { timeout: 60_000 }, async () => {
    const ns = await createNamespace(server, 'fanout');
    const from = rv(await ok(server, 'POST', `/api/v1/namespaces/${ns}/configmaps`, configMap('before')));
    const path = `/api/v1/namespaces/${ns}/configmaps?watch=true&resourceVersion=${from}`;
    // Open in batches so the TLS handshakes do not all land at once.
    for (let i = 0; i < WATCHERS; i += 100) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(100, WATCHERS - i) }, () => openWatch(client, path, { maxMs: 60_000 })),
      );
      watches.push(...batch);
    }
    assert.equal(watches.length, WATCHERS);
    assert.ok(watches.every((w) => w.status === 200));
    assert.equal(server.app.hub.stats.open, WATCHERS);

    const expected: string[] = [];
    for (let i = 0; i < WRITES; i++) {
      const obj = await ok(
        server,
        'POST',
        `/api/v1/namespaces/${ns}/configmaps`,
        configMap(`w-${String(i).padStart(2, '0')}`),
      );
      expected.push(`${obj.metadata.name ?? ''}@${rv(obj)}`);
    }
    const received = await Promise.all(watches.map((w) => w.take(WRITES, 30_000)));
    for (const [i, events] of received.entries()) {
      assert.deepEqual(
        events.map((e) => `${e.object.metadata.name ?? ''}@${rv(e.object)}`),
        expected,
        `watcher ${i}`,
      );
      assert.ok(
        events.every((e) => e.type === 'ADDED'),
        `watcher ${i}`,
      );
      for (let j = 1; j < events.length; j++) assert.ok(rv(events[j]!.object) > rv(events[j - 1]!.object));
    }
    // Nothing beyond the 20 writes, on any stream.
    const extra = await Promise.all(watches.map((w) => w.drain(200)));
    assert.equal(extra.flat().length, 0);

    for (const w of watches) w.close();
    await Promise.all(watches.map((w) => w.done));
    const deadline = Date.now() + 10_000;
    while (server.app.hub.stats.open > 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(server.app.hub.stats.open, 0, 'closing the client streams ends the server watches');
  });
});
