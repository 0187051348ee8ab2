import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { EXPIRED, MvccStore, type StoreEvent } from './mvcc.ts';
import { storedAs } from './kinds.ts';

const pod = (namespace: string, name: string, extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace, name },
  ...extra,
});

describe('MvccStore', () => {
  it('bumps one global resourceVersion on every write, across tables', () => {
    const store = new MvccStore({ historyLimit: 100 });
    const a = store.create('/pods', pod('ns', 'a'));
    const b = store.create('/configmaps', { metadata: { namespace: 'ns', name: 'b' } });
    const a2 = store.update('/pods', { ...structuredClone(a), spec: { x: 1 } });
    assert.deepEqual(
      [a.metadata.resourceVersion, b.metadata.resourceVersion, a2.metadata.resourceVersion],
      ['1', '2', '3'],
    );
    assert.equal(store.currentRv, 3);
    const gone = store.remove('/pods', 'ns', 'a');
    assert.equal(gone?.metadata.resourceVersion, '4', 'a DELETED event carries the deletion resourceVersion');
    assert.equal(store.get('/pods', 'ns', 'a'), undefined);
  });

  it('hands out frozen objects', () => {
    const store = new MvccStore({ historyLimit: 10 });
    const stored = store.create('/pods', pod('ns', 'a', { spec: { containers: [{ name: 'c' }] } }));
    assert.ok(Object.isFrozen(stored));
    assert.ok(Object.isFrozen(storedAs('/pods', stored).spec!.containers![0]));
  });

  it('lists sorted by namespace then name, per namespace or across all', () => {
    const store = new MvccStore({ historyLimit: 10 });
    for (const [ns, name] of [
      ['b', 'x'],
      ['a', 'z'],
      ['a', 'y'],
      ['a-b', 'q'],
    ] as const)
      store.create('/pods', pod(ns, name));
    assert.deepEqual(
      store.list('/pods').map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
      ['a/y', 'a/z', 'a-b/q', 'b/x'],
    );
    assert.deepEqual(
      store.list('/pods', 'a').map((o) => o.metadata.name),
      ['y', 'z'],
    );
    assert.equal(store.count('/pods'), 4);
    assert.equal(store.count('/pods', 'a'), 2);
  });

  it('replays events after a resourceVersion, per table, and expires what left the window', () => {
    const store = new MvccStore({ historyLimit: 3 });
    for (let i = 0; i < 5; i++) store.create('/pods', pod('ns', `p${i}`));
    // History keeps rv 3..5; a watch from rv 2 needs 3.. and still works, from rv 1 needs rv 2, which is gone.
    const since2 = store.eventsSince('/pods', 2);
    assert.notEqual(since2, EXPIRED);
    assert.deepEqual(
      (since2 as StoreEvent[]).map((e) => e.rv),
      [3, 4, 5],
    );
    assert.equal(store.eventsSince('/pods', 1), EXPIRED);
    assert.deepEqual(store.eventsSince('/configmaps', 4), []);
  });

  it('reconstructs a table as it was at an old resourceVersion', () => {
    const store = new MvccStore({ historyLimit: 100 });
    const a = store.create('/pods', pod('ns', 'a', { spec: { v: 1 } }));
    store.create('/pods', pod('ns', 'b'));
    const at2 = store.currentRv;
    store.update('/pods', { ...structuredClone(a), spec: { v: 2 } });
    store.remove('/pods', 'ns', 'b');
    store.create('/pods', pod('ns', 'c'));
    const old = store.listAt('/pods', at2);
    assert.notEqual(old, EXPIRED);
    assert.deepEqual(
      (old as KubeObject[]).map((o) => [o.metadata.name, o.spec]),
      [
        ['a', { v: 1 }],
        ['b', undefined],
      ],
    );
    assert.deepEqual(
      store.list('/pods').map((o) => o.metadata.name),
      ['a', 'c'],
    );
  });

  it('compact() expires every older resourceVersion at once', () => {
    const store = new MvccStore({ historyLimit: 100 });
    store.create('/pods', pod('ns', 'a'));
    store.create('/pods', pod('ns', 'b'));
    store.compact();
    assert.equal(store.eventsSince('/pods', 1), EXPIRED);
    assert.equal(store.listAt('/pods', 1), EXPIRED);
    assert.deepEqual(store.eventsSince('/pods', 2), []);
  });

  it('dumps and loads its state, keeping the resourceVersion counter', () => {
    const store = new MvccStore({ historyLimit: 100 });
    store.create('/pods', pod('ns', 'a'));
    store.create('/namespaces', { metadata: { name: 'ns' } });
    const copy = new MvccStore({ historyLimit: 100 });
    copy.load(store.dump());
    assert.equal(copy.currentRv, 2);
    assert.deepEqual(copy.list('/pods'), store.list('/pods'));
    assert.equal(copy.create('/pods', pod('ns', 'b')).metadata.resourceVersion, '3');
    assert.equal(copy.eventsSince('/pods', 1), EXPIRED, 'history does not survive a restart');
  });

  it('notifies subscribers synchronously, in resourceVersion order', () => {
    const store = new MvccStore({ historyLimit: 10 });
    const seen: string[] = [];
    const stop = store.subscribe((e) => seen.push(`${e.type}:${e.name}@${e.rv}`));
    const a = store.create('/pods', pod('ns', 'a'));
    store.update('/pods', structuredClone(a));
    store.remove('/pods', 'ns', 'a');
    stop();
    store.create('/pods', pod('ns', 'b'));
    assert.deepEqual(seen, ['ADDED:a@1', 'MODIFIED:a@2', 'DELETED:a@3']);
  });
});
