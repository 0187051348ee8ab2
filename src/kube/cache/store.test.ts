import assert from 'node:assert/strict';
import { heapPerItem } from '../../../test/support/heap.ts';
import { describe, it } from '../../../test/support/node-test.ts';
import type { KubeObject } from '../api/index.ts';
import { indexByNamespace, Store } from './store.ts';

const cm = (ns: string, name: string, rv: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { namespace: ns, name, resourceVersion: rv, labels },
  data: { big: 'x'.repeat(10) },
});
const byApp = (o: { metadata: { labels?: Readonly<Record<string, string>> } }) =>
  o.metadata.labels?.app ? [o.metadata.labels.app] : [];

describe('Store', () => {
  it('keys objects namespace/name (name when cluster-scoped) and hands them out frozen', () => {
    const store = new Store<KubeObject>();
    assert.deepEqual(store.add(cm('a', 'x', '1')).type, 'add');
    store.add({ metadata: { name: 'node-1', resourceVersion: '2' } });
    assert.deepEqual(store.listKeys().sort(), ['a/x', 'node-1']);
    const got = store.get('a/x')!;
    assert.ok(Object.isFrozen(got) && Object.isFrozen(got.metadata) && Object.isFrozen(got.data));
    assert.throws(() => {
      (got.metadata as { name: string }).name = 'y';
    }, TypeError);
  });

  it('add of an existing key is an update carrying the old object; delete carries the last state', () => {
    const store = new Store<KubeObject>();
    store.add(cm('a', 'x', '1'));
    const change = store.update(cm('a', 'x', '2'));
    assert.equal(change.type, 'update');
    assert.equal(change.type === 'update' && change.old.metadata.resourceVersion, '1');
    const del = store.delete(cm('a', 'x', '1'));
    assert.equal(del?.obj.metadata.resourceVersion, '2');
    assert.equal(store.delete(cm('a', 'x', '1')), undefined);
    assert.equal(store.size, 0);
  });

  it('replace computes adds, updates (changed RV only) and deletes with the last known object', () => {
    const store = new Store<KubeObject>();
    store.replace([cm('a', 'keep', '1'), cm('a', 'change', '2'), cm('b', 'gone', '3')], '3');
    const changes = store.replace([cm('a', 'keep', '1'), cm('a', 'change', '4'), cm('a', 'new', '5')], '5');
    const summary = changes.map((c) => `${c.type}:${c.obj.metadata.name}:${c.obj.metadata.resourceVersion}`).sort();
    assert.deepEqual(summary, ['add:new:5', 'delete:gone:3', 'update:change:4']);
    assert.equal(store.resourceVersion, '5');
    assert.deepEqual(store.listKeys().sort(), ['a/change', 'a/keep', 'a/new']);
  });

  it('indexes follow adds, updates, deletes and replaces; indexers added later index what is there', () => {
    const store = new Store<KubeObject>({ indexers: { byNamespace: indexByNamespace } });
    store.add(cm('a', 'x', '1', { app: 'web' }));
    store.add(cm('b', 'y', '2', { app: 'web' }));
    store.addIndexers({ byApp });
    assert.deepEqual(store.indexKeys('byApp', 'web').sort(), ['a/x', 'b/y']);
    store.update(cm('a', 'x', '3', { app: 'db' }));
    assert.deepEqual(store.indexKeys('byApp', 'web'), ['b/y']);
    assert.deepEqual(
      store.byIndex('byApp', 'db').map((o) => o.metadata.name),
      ['x'],
    );
    store.delete(cm('b', 'y', '2'));
    assert.deepEqual(store.indexKeys('byApp', 'web'), []);
    assert.deepEqual(store.indexValues('byApp'), ['db']);
    store.replace([cm('c', 'z', '9', { app: 'db' })], '9');
    assert.deepEqual(store.indexKeys('byApp', 'db'), ['c/z']);
    assert.deepEqual(store.indexValues('byNamespace'), ['c']);
    assert.throws(() => store.byIndex('nope', 'x'), /no indexer/);
    assert.throws(() => store.addIndexers({ byApp }), /already exists/);
  });

  it('applies the transform before storing', () => {
    const store = new Store<KubeObject>({
      transform: (o) => {
        delete o.data;
        return o;
      },
    });
    store.add(cm('a', 'x', '1'));
    assert.equal(store.get('a/x')!.data, undefined);
    assert.equal(store.get('a/x')!.metadata.resourceVersion, '1');
  });

  it('an index value naming one object (a uid) costs no Set of its own: under 100 bytes an object', () => {
    const objects = (n: number) =>
      Array.from({ length: n }, (_, i) => ({ metadata: { namespace: 'a', name: `p-${i}`, uid: `uid-${i}` } }));
    const fill = (store: Store<KubeObject>, list: KubeObject[]) => {
      for (const o of list) store.add(o);
      return store;
    };
    const plain = heapPerItem(20_000, objects, (list) => fill(new Store<KubeObject>(), list));
    const byUid = heapPerItem(20_000, objects, (list) =>
      fill(new Store<KubeObject>({ indexers: { uid: (o) => [o.metadata.uid ?? ''] } }), list),
    );
    // A Set of one key per uid made it about 200.
    assert.ok(byUid - plain < 100, `the uid index: ${(byUid - plain).toFixed(0)} bytes an object`);
  });
});
