import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { EXPIRED, MvccStore } from '../store/index.ts';
import { WatchHub, jsonLines, type WatchSpec } from './hub.ts';

interface Line {
  type: string;
  object: KubeObject;
}

/** Reads lines from a watch stream until `count` arrived or the stream ended. */
async function readLines(stream: ReadableStream<Uint8Array>, count: number): Promise<Line[]> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const lines: Line[] = [];
  while (lines.length < count) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    let nl;
    while ((nl = text.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(text.slice(0, nl)) as Line);
      text = text.slice(nl + 1);
    }
  }
  reader.releaseLock();
  return lines;
}

function spec(overrides: Partial<WatchSpec> = {}): WatchSpec {
  return {
    table: '/pods',
    matches: () => true,
    apiVersion: 'v1',
    kind: 'Pod',
    render: { key: 'v1', fn: (o) => o },
    encoding: jsonLines,
    fromRv: undefined,
    bookmarks: false,
    timeoutMs: 60_000,
    ...overrides,
  };
}

const pod = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace: 'ns', name, labels },
});

describe('WatchHub', () => {
  it('sends the current state as ADDED, then live events in order', async () => {
    const store = new MvccStore({ historyLimit: 100 });
    const hub = new WatchHub(store, { bookmarkIntervalMs: 60_000, maxQueuedBytes: 1 << 20 });
    store.create('/pods', pod('a'));
    const stream = hub.open(spec());
    assert.notEqual(stream, EXPIRED);
    const b = store.create('/pods', pod('b'));
    store.update('/pods', structuredClone(b));
    store.remove('/pods', 'ns', 'b');
    const lines = await readLines(stream as ReadableStream<Uint8Array>, 4);
    assert.deepEqual(
      lines.map((l) => `${l.type}:${l.object.metadata.name}@${l.object.metadata.resourceVersion}`),
      ['ADDED:a@1', 'ADDED:b@2', 'MODIFIED:b@3', 'DELETED:b@4'],
    );
    hub.close();
  });

  it('replays from a resourceVersion, and refuses one that left the history', async () => {
    const store = new MvccStore({ historyLimit: 2 });
    const hub = new WatchHub(store, { bookmarkIntervalMs: 60_000, maxQueuedBytes: 1 << 20 });
    for (const n of ['a', 'b', 'c']) store.create('/pods', pod(n));
    assert.equal(hub.open(spec({ fromRv: 0 })), EXPIRED);
    const lines = await readLines(hub.open(spec({ fromRv: 1 })) as ReadableStream<Uint8Array>, 2);
    assert.deepEqual(
      lines.map((l) => l.object.metadata.name),
      ['b', 'c'],
    );
    hub.close();
  });

  it('turns objects entering and leaving a selection into ADDED and DELETED', async () => {
    const store = new MvccStore({ historyLimit: 100 });
    const hub = new WatchHub(store, { bookmarkIntervalMs: 60_000, maxQueuedBytes: 1 << 20 });
    const stream = hub.open(spec({ matches: (o) => o.metadata.labels?.app === 'web' })) as ReadableStream<Uint8Array>;
    const a = store.create('/pods', pod('a', { app: 'db' }));
    const a2 = store.update('/pods', {
      ...structuredClone(a),
      metadata: { ...structuredClone(a.metadata), labels: { app: 'web' } },
    });
    const a3 = store.update('/pods', {
      ...structuredClone(a2),
      metadata: { ...structuredClone(a2.metadata), labels: { app: 'db' } },
    });
    const lines = await readLines(stream, 2);
    assert.deepEqual(
      lines.map((l) => l.type),
      ['ADDED', 'DELETED'],
    );
    // The DELETED carries the last matching state at the resourceVersion of the change that made it leave.
    assert.equal(lines[1]!.object.metadata.labels?.app, 'web');
    assert.equal(lines[1]!.object.metadata.resourceVersion, a3.metadata.resourceVersion);
    hub.close();
  });

  it('serialises an event once for all watchers that present it the same way', async () => {
    const store = new MvccStore({ historyLimit: 100 });
    const hub = new WatchHub(store, { bookmarkIntervalMs: 60_000, maxQueuedBytes: 1 << 20 });
    const streams = [hub.open(spec()), hub.open(spec())] as ReadableStream<Uint8Array>[];
    const readers = streams.map((s) => s.getReader());
    store.create('/pods', pod('a'));
    const [first, second] = await Promise.all(readers.map((r) => r.read()));
    assert.equal(first!.value, second!.value, 'the very same bytes');
    hub.close();
  });

  it('ends a watcher that falls too far behind without holding up the others', async () => {
    const store = new MvccStore({ historyLimit: 1000 });
    const hub = new WatchHub(store, { bookmarkIntervalMs: 60_000, maxQueuedBytes: 2048 });
    const slow = hub.open(spec()) as ReadableStream<Uint8Array>;
    const fast = hub.open(spec()) as ReadableStream<Uint8Array>;
    const fastLines = readLines(fast, 50);
    for (let i = 0; i < 50; i++) {
      store.create('/pods', pod(`p${i}`, { padding: 'x'.repeat(60) }));
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal((await fastLines).length, 50, 'the reading watcher got everything');
    assert.equal(hub.stats.closedTooSlow, 1);
    const slowLines = await readLines(slow, 1000);
    assert.ok(slowLines.length < 50, 'the slow watcher was ended, its backlog dropped');
    assert.equal(slowLines.at(-1)?.type, 'ERROR', 'the last line says why');
    hub.close();
  });

  it('sends bookmarks with the current resourceVersion to watches that asked', async () => {
    const store = new MvccStore({ historyLimit: 100 });
    const hub = new WatchHub(store, { bookmarkIntervalMs: 20, maxQueuedBytes: 1 << 20 });
    store.create('/pods', pod('a'));
    const stream = hub.open(spec({ fromRv: 1, bookmarks: true })) as ReadableStream<Uint8Array>;
    const [line] = await readLines(stream, 1);
    assert.equal(line!.type, 'BOOKMARK');
    assert.deepEqual(line!.object, { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion: '1' } });
    hub.close();
  });

  it('ends every watch on a table that stops being served', async () => {
    const store = new MvccStore({ historyLimit: 100 });
    const hub = new WatchHub(store, { bookmarkIntervalMs: 60_000, maxQueuedBytes: 1 << 20 });
    const crs = hub.open(spec({ table: 'example.com/widgets' })) as ReadableStream<Uint8Array>;
    const pods = hub.open(spec()) as ReadableStream<Uint8Array>;
    hub.endTable('example.com/widgets');
    assert.deepEqual(await readLines(crs, 10), []);
    assert.equal(hub.stats.open, 1, 'the pods watch stays');
    void pods.cancel();
    hub.close();
  });

  it('ends a watch cleanly at its timeout', async () => {
    const store = new MvccStore({ historyLimit: 100 });
    const hub = new WatchHub(store, { bookmarkIntervalMs: 60_000, maxQueuedBytes: 1 << 20 });
    const lines = await readLines(hub.open(spec({ timeoutMs: 30 })) as ReadableStream<Uint8Array>, 10);
    assert.deepEqual(lines, []);
    assert.equal(hub.stats.open, 0);
    hub.close();
  });
});
