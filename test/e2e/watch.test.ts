/**
 * Watch semantics over real HTTPS connections (docs/kube-api.md "Watch"): replay from a resourceVersion, 410 Expired,
 * synthetic ADDED, bookmarks, timeoutSeconds, selectors, slow watchers, and the fault API's effect on watches.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import type { KubeObject } from '../../src/kube/api/index.ts';
import { assertFailure, call, configMap, createNamespace, get, ok, rv } from '../support/api.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { openWatch, type WatchEvent } from '../support/watch.ts';

const cmPath = (ns: string, name = '') => `/api/v1/namespaces/${ns}/configmaps${name ? `/${name}` : ''}`;
const summary = (events: WatchEvent[]) =>
  events.map((e) => `${e.type} ${e.object.metadata.name ?? ''}@${e.object.metadata.resourceVersion ?? ''}`);

describe('watch over HTTP', { timeout: 120_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ bookmarkIntervalMs: 200 });
  });
  after(async () => {
    await server.stop();
  });

  it('from a retained resourceVersion replays exactly the events after it, then live events', async () => {
    const ns = await createNamespace(server, 'replay');
    const a = await ok(server, 'POST', cmPath(ns), configMap('a'));
    const a2 = await ok(server, 'PUT', cmPath(ns, 'a'), { ...a, data: { v: '2' } });
    const b = await ok(server, 'POST', cmPath(ns), configMap('b'));
    const gone = await ok(server, 'DELETE', cmPath(ns, 'a'));
    const watch = await openWatch(server, `${cmPath(ns)}?watch=true&resourceVersion=${a.metadata.resourceVersion}`);
    try {
      const events = await watch.take(3);
      assert.deepEqual(summary(events), [`MODIFIED a@${rv(a2)}`, `ADDED b@${rv(b)}`, `DELETED a@${rv(gone)}`]);
      assert.deepEqual(events[0]!.object.data, { v: '2' });
      for (const e of events) {
        assert.equal(e.object.kind, 'ConfigMap');
        assert.equal(e.object.apiVersion, 'v1');
      }
      assert.deepEqual(await watch.drain(300), [], 'nothing beyond the history');
      const c = await ok(server, 'POST', cmPath(ns), configMap('c'));
      assert.deepEqual(summary(await watch.take(1)), [`ADDED c@${rv(c)}`]);
    } finally {
      watch.close();
    }
  });

  it('with resourceVersion "0" or none: synthetic ADDED for every existing object first', async () => {
    const ns = await createNamespace(server, 'synthetic');
    const existing: KubeObject[] = [];
    for (const name of ['x', 'y', 'z']) existing.push(await ok(server, 'POST', cmPath(ns), configMap(name)));
    for (const query of ['watch=true&resourceVersion=0', 'watch=true', 'watch=1']) {
      const watch = await openWatch(server, `${cmPath(ns)}?${query}`);
      try {
        const initial = await watch.take(existing.length);
        assert.deepEqual(
          summary(initial).sort(),
          existing.map((o) => `ADDED ${o.metadata.name ?? ''}@${rv(o)}`).sort(),
          query,
        );
        assert.deepEqual(await watch.drain(200), []);
        const live = await ok(server, 'POST', cmPath(ns), configMap(`live-${existing.length}`));
        existing.push(live);
        assert.deepEqual(summary(await watch.take(1)), [`ADDED ${live.metadata.name ?? ''}@${rv(live)}`]);
      } finally {
        watch.close();
      }
      // The next query sees the object just made as existing.
      existing.splice(0, existing.length, ...(await ok<{ items: typeof existing }>(server, 'GET', cmPath(ns))).items);
    }
  });

  it('from a resourceVersion older than the history window: an ERROR event with Status 410 Expired', async () => {
    const small = await startTestServer({ historyLimit: 5 });
    try {
      const ns = await createNamespace(small, 'expired');
      const first = await ok(small, 'POST', cmPath(ns), configMap('first'));
      for (let i = 0; i < 6; i++) await ok(small, 'POST', cmPath(ns), configMap(`n${i}`));
      const watch = await openWatch(
        small,
        `${cmPath(ns)}?watch=true&resourceVersion=${first.metadata.resourceVersion}`,
      );
      const events = await watch.rest();
      assert.equal(events.length, 1, JSON.stringify(events));
      assert.equal(events[0]!.type, 'ERROR');
      assert.equal(events[0]!.object.kind, 'Status');
      assert.equal(events[0]!.object.code, 410);
      assert.equal(events[0]!.object.reason, 'Expired');
      // A resourceVersion still in the window works.
      const recent = await ok(small, 'GET', cmPath(ns, 'n5'));
      const ok2 = await openWatch(small, `${cmPath(ns)}?watch=true&resourceVersion=${recent.metadata.resourceVersion}`);
      try {
        assert.deepEqual(await ok2.drain(200), []);
      } finally {
        ok2.close();
      }
    } finally {
      await small.stop();
    }
  });

  it('from a resourceVersion newer than the current one: silent, bookmarks too, until the store passes it', async () => {
    const ns = await createNamespace(server, 'future');
    const now = await ok(server, 'POST', cmPath(ns), configMap('now'));
    const from = rv(now) + 2;
    const watch = await openWatch(server, `${cmPath(ns)}?watch=true&allowWatchBookmarks=true&resourceVersion=${from}`);
    try {
      assert.equal(watch.status, 200, 'not an error: the real watch cache waits');
      // 200 ms bookmarks: several rounds pass, and none says a resourceVersion older than the one asked for.
      await ok(server, 'POST', cmPath(ns), configMap('skipped'));
      assert.deepEqual(summary(await watch.drain(700)), []);
      const reached = await ok(server, 'POST', cmPath(ns), configMap('reached'));
      assert.equal(rv(reached), from);
      const after = await ok(server, 'POST', cmPath(ns), configMap('after'));
      const events = await watch.until((e) => e.type === 'ADDED' && e.object.metadata.name === 'after', 3_000);
      assert.deepEqual(
        summary(events.filter((e) => e.type !== 'BOOKMARK')),
        [`ADDED after@${rv(after)}`],
        'only the events after the resourceVersion asked for',
      );
      for (const e of events.filter((e) => e.type === 'BOOKMARK')) assert.ok(rv(e.object) >= from);
    } finally {
      watch.close();
    }
  });

  it('bookmarks with allowWatchBookmarks=true carry the current resourceVersion and nothing else', async () => {
    const ns = await createNamespace(server, 'bookmarks');
    const start = await ok(server, 'POST', cmPath(ns), configMap('start'));
    const watch = await openWatch(
      server,
      `${cmPath(ns)}?watch=true&allowWatchBookmarks=true&resourceVersion=${start.metadata.resourceVersion}`,
    );
    try {
      const latest = await ok(server, 'POST', cmPath(ns), configMap('latest'));
      const events = await watch.until((e) => e.type === 'BOOKMARK' && rv(e.object) === rv(latest), 3_000);
      const added = events.filter((e) => e.type === 'ADDED');
      assert.deepEqual(summary(added), [`ADDED latest@${rv(latest)}`]);
      const bookmark = events.at(-1)!;
      assert.deepEqual(bookmark.object, {
        kind: 'ConfigMap',
        apiVersion: 'v1',
        metadata: { resourceVersion: String(rv(latest)) },
      });
      // Periodic: more follow.
      const more = (await watch.drain(700)).filter((e) => e.type === 'BOOKMARK');
      assert.ok(more.length >= 2, `bookmarks in 700 ms at a 200 ms interval: ${more.length}`);
    } finally {
      watch.close();
    }
  });

  it('no bookmarks without allowWatchBookmarks (or with it false); python\'s "True" asks for them', async () => {
    const ns = await createNamespace(server, 'no-bookmarks');
    const watches = await Promise.all(
      ['', '&allowWatchBookmarks=false', '&allowWatchBookmarks=True'].map((q) =>
        openWatch(server, `${cmPath(ns)}?watch=true&resourceVersion=0${q}`),
      ),
    );
    try {
      const [none, off, python] = await Promise.all(watches.map((w) => w.drain(800)));
      assert.deepEqual(
        none!.map((e) => e.type),
        [],
      );
      assert.deepEqual(
        off!.map((e) => e.type),
        [],
      );
      assert.ok(python!.length >= 2 && python!.every((e) => e.type === 'BOOKMARK'), JSON.stringify(python));
    } finally {
      for (const w of watches) w.close();
    }
  });

  it('timeoutSeconds=1 ends the stream cleanly after about a second', async () => {
    const ns = await createNamespace(server, 'timeout');
    const started = Date.now();
    const watch = await openWatch(server, `${cmPath(ns)}?watch=true&timeoutSeconds=1`);
    const events = await watch.rest(5_000);
    const elapsed = Date.now() - started;
    assert.deepEqual(events, []);
    assert.equal(watch.failure, undefined, 'ended without a transport error');
    assert.ok(elapsed >= 900 && elapsed < 3_000, `ended after ${elapsed} ms`);
  });

  it('selectors apply to watches; an object leaving the selection arrives as DELETED, one entering as ADDED', async () => {
    const ns = await createNamespace(server, 'watch-selectors');
    const start = await ok(server, 'POST', cmPath(ns), configMap('seed'));
    const watch = await openWatch(
      server,
      `${cmPath(ns)}?watch=true&labelSelector=app%3Da&resourceVersion=${start.metadata.resourceVersion}`,
    );
    const byName = await openWatch(
      server,
      `${cmPath(ns)}?watch=true&fieldSelector=metadata.name%3Done&resourceVersion=${start.metadata.resourceVersion}`,
    );
    try {
      const one = await ok(server, 'POST', cmPath(ns), configMap('one', { labels: { app: 'a' } }));
      await ok(server, 'POST', cmPath(ns), configMap('two', { labels: { app: 'b' } }));
      const moved = await ok(
        server,
        'PATCH',
        cmPath(ns, 'one'),
        { metadata: { labels: { app: 'b' } } },
        'application/merge-patch+json',
      );
      const joined = await ok(
        server,
        'PATCH',
        cmPath(ns, 'two'),
        { metadata: { labels: { app: 'a' } } },
        'application/merge-patch+json',
      );
      const events = await watch.take(3);
      assert.deepEqual(summary(events), [
        `ADDED one@${rv(one)}`,
        `DELETED one@${rv(moved)}`,
        `ADDED two@${rv(joined)}`,
      ]);
      assert.deepEqual(await watch.drain(200), []);
      const named = await byName.take(2);
      assert.deepEqual(summary(named), [`ADDED one@${rv(one)}`, `MODIFIED one@${rv(moved)}`]);
      assert.deepEqual(await byName.drain(200), []);
    } finally {
      watch.close();
      byName.close();
    }
  });

  it('the legacy /watch/ prefix and watch=True (python) open watches too', async () => {
    const ns = await createNamespace(server, 'legacy');
    const obj = await ok(server, 'POST', cmPath(ns), configMap('only'));
    for (const path of [`/api/v1/watch/namespaces/${ns}/configmaps`, `${cmPath(ns)}?watch=True`]) {
      const watch = await openWatch(server, path);
      try {
        assert.deepEqual(summary(await watch.take(1)), [`ADDED only@${rv(obj)}`]);
      } finally {
        watch.close();
      }
    }
  });
});

describe('the fault API', { timeout: 60_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.stop();
  });

  it('a rule fails exactly the next 2 GETs of a path with 500 and Retry-After', async () => {
    const ns = await createNamespace(server, 'faults');
    await ok(server, 'POST', cmPath(ns), configMap('target'));
    const rule = await ok<{ id: number }>(server, 'POST', '/_raven/faults/rules', {
      path: cmPath(ns, 'target'),
      method: 'GET',
      count: 2,
      status: 500,
      retryAfterSeconds: 7,
    });
    assert.ok(rule.id > 0);
    // Other methods and other paths are not affected.
    assert.equal(
      (await call(server, 'PATCH', cmPath(ns, 'target'), { data: { v: 'p' } }, 'application/merge-patch+json')).status,
      200,
    );
    assert.equal((await get(server, cmPath(ns))).status, 200);
    const replies = [];
    for (let i = 0; i < 4; i++) replies.push(await get(server, cmPath(ns, 'target')));
    assert.deepEqual(
      replies.map((r) => r.status),
      [500, 500, 200, 200],
    );
    for (const failed of replies.slice(0, 2)) {
      assertFailure(failed, 500, 'InternalError');
      assert.equal(failed.headers.get('retry-after'), '7');
    }
    assert.deepEqual(replies[2]!.body.data, { key: 'value', v: 'p' });
    assert.deepEqual((await ok<{ rules: unknown[] }>(server, 'GET', '/_raven/faults/rules')).rules, []);
  });

  it('drop-watches ends open watches (clean: a normal end; abort: a cut connection), and new watches work', async () => {
    const ns = await createNamespace(server, 'drops');
    const clean = [
      await openWatch(server, `${cmPath(ns)}?watch=true`),
      await openWatch(server, `${cmPath(ns)}?watch=true`),
    ];
    await ok(server, 'POST', cmPath(ns), configMap('seen'));
    for (const w of clean) assert.equal((await w.take(1))[0]!.object.metadata.name, 'seen');
    const dropped = await ok<{ dropped: number }>(server, 'POST', '/_raven/faults/drop-watches', { mode: 'clean' });
    assert.ok(dropped.dropped >= 2);
    for (const w of clean) {
      assert.deepEqual(await w.rest(), []);
      assert.equal(w.failure, undefined);
    }
    const cut = await openWatch(server, `${cmPath(ns)}?watch=true&resourceVersion=0`);
    assert.equal((await cut.take(1))[0]!.object.metadata.name, 'seen');
    await ok(server, 'POST', '/_raven/faults/drop-watches', { mode: 'abort' });
    await assert.rejects(cut.rest());
    assert.ok(cut.failure, 'an aborted watch ends with a transport error');
    assert.equal(server.app.hub.stats.open, 0);
    const after = await openWatch(server, `${cmPath(ns)}?watch=true`);
    try {
      assert.equal((await after.take(1))[0]!.object.metadata.name, 'seen');
    } finally {
      after.close();
    }
  });

  it('compact: watches from before the compaction get 410, from the current resourceVersion work', async () => {
    const ns = await createNamespace(server, 'compact');
    const old = await ok(server, 'POST', cmPath(ns), configMap('old'));
    const current = await ok(server, 'POST', cmPath(ns), configMap('current'));
    await ok(server, 'POST', '/_raven/faults/compact', {});
    const expired = await openWatch(server, `${cmPath(ns)}?watch=true&resourceVersion=${old.metadata.resourceVersion}`);
    const [error, ...rest] = await expired.rest();
    assert.equal(error?.type, 'ERROR');
    assert.equal(error.object.code, 410);
    assert.equal(error.object.reason, 'Expired');
    assert.deepEqual(rest, []);
    const fresh = await openWatch(
      server,
      `${cmPath(ns)}?watch=true&resourceVersion=${current.metadata.resourceVersion}`,
    );
    try {
      const next = await ok(server, 'POST', cmPath(ns), configMap('next'));
      assert.deepEqual(summary(await fresh.take(1)), [`ADDED next@${rv(next)}`]);
    } finally {
      fresh.close();
    }
  });
});

describe('a slow watcher', { timeout: 90_000 }, () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ maxWatchQueueBytes: 256 * 1024 });
  });
  after(async () => {
    await server.stop();
  });

  it('is closed without holding up a fast watcher, which receives everything', async () => {
    const ns = await createNamespace(server, 'slow');
    const start = rv(await ok(server, 'POST', cmPath(ns), configMap('start')));
    const path = `${cmPath(ns)}?watch=true&resourceVersion=${start}`;
    const slowController = new AbortController();
    const slowTimer = setTimeout(() => slowController.abort(), 80_000);
    // A client that never reads: the response body is left alone until the end.
    const slow = await server.request(path, { signal: slowController.signal });
    const fast = await openWatch(server, path, { maxMs: 80_000 });
    try {
      assert.equal(slow.status, 200);
      const payload = 'x'.repeat(200 * 1024);
      const count = 150;
      const written: string[] = [];
      const fastEvents: WatchEvent[] = [];
      for (let i = 0; i < count; i++) {
        const obj = await ok(
          server,
          'POST',
          cmPath(ns),
          configMap(`big-${String(i).padStart(3, '0')}`, { data: { payload } }),
        );
        written.push(`ADDED ${obj.metadata.name ?? ''}@${rv(obj)}`);
        fastEvents.push(...(await fast.take(1, 10_000)));
      }
      assert.deepEqual(summary(fastEvents), written);
      assert.equal(server.app.hub.stats.closedTooSlow, 1);
      // The slow client now reads: whatever was in flight, then the end of the stream (not all 150 events).
      let lines = 0;
      let tail = '';
      for await (const chunk of slow.body!) {
        tail += Buffer.from(chunk as Uint8Array).toString();
        const parts = tail.split('\n');
        tail = parts.pop()!;
        lines += parts.length;
      }
      assert.ok(lines < count, `the slow watcher was closed early (it got ${lines} of ${count} events)`);
      assert.equal(tail, '', 'the stream ends on a line boundary');
    } finally {
      clearTimeout(slowTimer);
      slowController.abort();
      fast.close();
    }
  });
});
