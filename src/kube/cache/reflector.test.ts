import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failureStatus, type KubeList, type KubeObject, type WatchEvent } from '../api/index.ts';
import { KubeStatusError, resources, type ListOptions, type WatchOptions } from '../client/index.ts';
import { Reflector, type ListerWatcher } from './reflector.ts';
import { Store } from './store.ts';

const obj = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'n', resourceVersion: rv } });
const page = (rv: string, items: KubeObject[]): KubeList => ({
  apiVersion: 'v1',
  kind: 'ConfigMapList',
  metadata: { resourceVersion: rv },
  items,
});
const gone = () => new KubeStatusError(failureStatus(410, 'Expired', 'too old'), 'GET', '/x');

describe('Reflector resourceVersion rules (scripted client)', () => {
  it('lists at "0", watches with bookmarks and a timeout in [300, 600); on 410 relists at the last RV, then at ""', async () => {
    const lists: (string | undefined)[] = [];
    const watches: WatchOptions[] = [];
    const ac = new AbortController();
    const script: Array<() => WatchEvent[]> = [
      () => [
        { type: 'ADDED', object: obj('b', '11') },
        { type: 'BOOKMARK', object: obj('', '15') },
        { type: 'ERROR', object: failureStatus(410, 'Expired', 'gone') },
      ],
    ];
    const client: ListerWatcher = {
      // eslint-disable-next-line @typescript-eslint/require-await
      async *listPages<T extends KubeObject>(
        _ref: unknown,
        options?: ListOptions,
      ): AsyncGenerator<KubeList<T>, void, undefined> {
        lists.push(options?.resourceVersion);
        assert.equal(options?.limit, 500);
        if (lists.length === 1) yield page('10', [obj('a', '5')]) as KubeList<T>;
        else if (options?.resourceVersion === '15') throw gone();
        else yield page('20', [obj('c', '18')]) as KubeList<T>;
      },
      async *watch<T extends KubeObject>(
        _ref: unknown,
        options?: WatchOptions,
      ): AsyncGenerator<WatchEvent<T>, void, undefined> {
        watches.push(options!);
        const step = script.shift();
        if (step) {
          yield* step() as WatchEvent<T>[];
          return;
        }
        ac.abort();
        await Promise.resolve();
      },
    };
    const store = new Store<KubeObject>();
    const deletes: string[] = [];
    const reflector = new Reflector<KubeObject>({
      client,
      resource: resources.configmaps,
      store,
      backoff: { initialMs: 1, maxMs: 2 },
      onChanges: (changes) => {
        for (const c of changes) if (c.type === 'delete') deletes.push(c.obj.metadata.name!);
      },
    });
    await reflector.run(ac.signal);
    assert.deepEqual(lists, ['0', '15', '']);
    assert.deepEqual(
      watches.map((w) => w.resourceVersion),
      ['10', '20'],
    );
    for (const w of watches) {
      assert.equal(w.allowWatchBookmarks, true);
      assert.ok(w.timeoutSeconds! >= 300 && w.timeoutSeconds! < 600, String(w.timeoutSeconds));
    }
    assert.deepEqual(store.listKeys(), ['n/c']);
    assert.deepEqual(deletes.sort(), ['a', 'b']);
    assert.equal(reflector.hasSynced(), true);
    assert.equal(reflector.lastSyncResourceVersion(), '20');
  });
});
