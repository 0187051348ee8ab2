import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { failureStatus, type KubeList, type KubeObject, type WatchEvent } from '../api/index.ts';
import {
  KubeStatusError,
  WatchInterruptedError,
  resources,
  type ListOptions,
  type WatchOptions,
} from '../client/index.ts';
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

/**
 * A scripted client: each list answers from `lists` (by call), each watch from `watches`; when a script runs out the
 * reflector is stopped. Records every list's resourceVersion (` (limit 1)` marks the server-RV check) and every
 * watch's options.
 */
function scripted(script: { lists: Array<(rv: string | undefined) => KubeList>; watches: Array<() => WatchEvent[]> }) {
  const ac = new AbortController();
  const lists: string[] = [];
  const limits: (number | undefined)[] = [];
  const watchOptions: WatchOptions[] = [];
  const client: ListerWatcher = {
    // eslint-disable-next-line @typescript-eslint/require-await
    async *listPages<T extends KubeObject>(
      _ref: unknown,
      options?: ListOptions,
    ): AsyncGenerator<KubeList<T>, void, undefined> {
      lists.push(`${options?.resourceVersion}${options?.limit === 1 ? ' (limit 1)' : ''}`);
      limits.push(options?.limit);
      const step = script.lists.shift();
      if (!step) {
        ac.abort();
        throw new Error('stopped');
      }
      yield step(options?.resourceVersion) as KubeList<T>;
    },
    async *watch<T extends KubeObject>(
      _ref: unknown,
      options?: WatchOptions,
    ): AsyncGenerator<WatchEvent<T>, void, undefined> {
      watchOptions.push(options!);
      const step = script.watches.shift();
      if (!step) {
        ac.abort();
        await Promise.resolve();
        return;
      }
      options?.onOpen?.();
      await Promise.resolve();
      yield* step() as WatchEvent<T>[];
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
  const watches = () => watchOptions.map((w) => w.resourceVersion);
  return { reflector, store, lists, limits, watchOptions, watches, deletes, run: () => reflector.run(ac.signal) };
}

describe('Reflector resourceVersion rules (scripted client)', () => {
  it('lists at "0", watches with bookmarks and a timeout in [300, 600); on 410 relists at the last RV, then at ""', async () => {
    const t = scripted({
      lists: [
        () => page('10', [obj('a', '5')]),
        () => {
          throw gone();
        },
        () => page('20', [obj('c', '18')]),
      ],
      watches: [
        () => [
          { type: 'ADDED', object: obj('b', '11') },
          { type: 'BOOKMARK', object: obj('', '15') },
          { type: 'ERROR', object: failureStatus(410, 'Expired', 'gone') },
        ],
      ],
    });
    await t.run();
    assert.deepEqual(t.lists, ['0', '15', '']);
    assert.deepEqual(t.limits, [500, 500, 500]);
    assert.deepEqual(t.watches(), ['10', '20']);
    for (const w of t.watchOptions) {
      assert.equal(w.allowWatchBookmarks, true);
      assert.ok(w.timeoutSeconds! >= 300 && w.timeoutSeconds! < 600, String(w.timeoutSeconds));
    }
    assert.deepEqual(t.store.listKeys(), ['n/c']);
    assert.deepEqual(t.deletes.sort(), ['a', 'b']);
    assert.equal(t.reflector.hasSynced(), true);
    assert.equal(t.reflector.lastSyncResourceVersion(), '20');
  });
});

const tooLarge = (rv: string) =>
  failureStatus(504, 'Timeout', `Too large resource version: ${rv}, current: 5`, {
    causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
    retryAfterSeconds: 1,
  });
const cut = () => {
  throw new WatchInterruptedError('/api/v1/configmaps', new Error('socket hang up'));
};

describe('Reflector after the API server went back in time (scripted client)', () => {
  it('a watch answered 504 ResourceVersionTooLarge relists from "", and what vanished becomes deletes', async () => {
    const t = scripted({
      lists: [() => page('100', [obj('a', '90'), obj('b', '95')]), () => page('5', [obj('c', '4')])],
      watches: [
        () => {
          throw new KubeStatusError(tooLarge('100'), 'GET', '/api/v1/configmaps');
        },
      ],
    });
    await t.run();
    assert.deepEqual(t.lists, ['0', '']);
    assert.deepEqual(t.watches(), ['100', '5']);
    assert.deepEqual(t.store.listKeys(), ['n/c']);
    assert.deepEqual(t.deletes.sort(), ['a', 'b']);
    assert.equal(t.reflector.lastSyncResourceVersion(), '5');
  });

  it('so does the same 504 as an ERROR event on the watch stream', async () => {
    const t = scripted({
      lists: [() => page('100', [obj('a', '90')]), () => page('7', [])],
      watches: [() => [{ type: 'ERROR', object: tooLarge('100') }]],
    });
    await t.run();
    assert.deepEqual(t.lists, ['0', '']);
    assert.deepEqual(t.deletes, ['a']);
  });

  it('a relist at the last RV answered 504 ResourceVersionTooLarge lists again at "" at once', async () => {
    const t = scripted({
      lists: [
        () => page('100', [obj('a', '90')]),
        (rv) => {
          assert.equal(rv, '120');
          throw new KubeStatusError(tooLarge('120'), 'GET', '/api/v1/configmaps');
        },
        () => page('3', []),
      ],
      watches: [
        () => [
          { type: 'BOOKMARK', object: obj('', '120') },
          { type: 'ERROR', object: failureStatus(410, 'Expired', 'too old resource version') },
        ],
      ],
    });
    await t.run();
    assert.deepEqual(t.lists, ['0', '120', '']);
    assert.deepEqual(t.watches(), ['100', '3']);
    assert.deepEqual(t.deletes, ['a']);
  });

  it('a watch event older than the last RV is not applied: relist from ""', async () => {
    const t = scripted({
      lists: [() => page('100', [obj('a', '90')]), () => page('12', [obj('fresh', '11')])],
      watches: [
        () => [
          { type: 'ADDED', object: obj('b', '101') },
          { type: 'ADDED', object: obj('stale', '11') },
        ],
      ],
    });
    await t.run();
    assert.deepEqual(t.lists, ['0', '']);
    assert.deepEqual(t.store.listKeys(), ['n/fresh']);
    assert.deepEqual(t.deletes.sort(), ['a', 'b']);
  });

  it('after a failure it reads the server RV before watching again: older → relist from "", else re-watch', async () => {
    const t = scripted({
      lists: [
        () => page('100', [obj('a', '90')]),
        // The check after the first cut: the server moved on, so the watch resumes from 100.
        () => page('140', [obj('x', '130')]),
        // After the second cut: the server is at 6, so it lost its state.
        () => page('6', []),
        () => page('6', [obj('new', '6')]),
      ],
      watches: [cut, cut],
    });
    await t.run();
    assert.deepEqual(t.lists, ['0', ' (limit 1)', ' (limit 1)', '']);
    assert.deepEqual(t.watches(), ['100', '100', '6']);
    assert.deepEqual(t.store.listKeys(), ['n/new']);
    assert.deepEqual(t.deletes, ['a']);
    assert.equal(t.reflector.listCount, 2, 'the checks are not lists of the collection');
  });

  it('health: a failure starts a run of failures, a list or an opened watch ends it', async () => {
    const seen: string[] = [];
    const health = (when: string) => {
      const h = t.reflector.health();
      seen.push(`${when}: ${h.failingSince === undefined ? 'healthy' : `failing (${h.lastError})`}`);
    };
    const t = scripted({
      lists: [
        () => page('100', []),
        () => {
          health('checking after the cut');
          return page('100', []);
        },
      ],
      watches: [
        cut,
        () => {
          health('watch open again');
          return [];
        },
      ],
    });
    await t.run();
    assert.deepEqual(seen, [
      'checking after the cut: failing (watch /api/v1/configmaps was interrupted: socket hang up)',
      'watch open again: healthy',
    ]);
  });

  it('a clean end re-watches from the last RV without a check; a very short watch is a failure', async () => {
    const t = scripted({
      lists: [() => page('100', [])],
      watches: [() => [{ type: 'ADDED', object: obj('a', '101') }], () => []],
    });
    await t.run();
    // The second watch ends at once without events: the check comes before the third (where the script ends).
    assert.deepEqual(t.watches(), ['100', '101']);
    assert.deepEqual(t.lists, ['0', ' (limit 1)']);
  });
});
