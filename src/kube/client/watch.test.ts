import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import type { RavenError } from '../../core/index.ts';
import { ndjson, watchEvents } from './watch.ts';

async function* chunks(...parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  await Promise.resolve();
  for (const p of parts) yield typeof p === 'string' ? new TextEncoder().encode(p) : p;
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const v of it) out.push(v);
  return out;
}

describe('ndjson', () => {
  it('joins lines split across chunks, including inside a UTF-8 character', async () => {
    const bytes = new TextEncoder().encode('{"a":"é"}\n');
    const cut = bytes.indexOf(0xc3) + 1; // between the two bytes of é
    const values = await collect(ndjson(chunks('{"n":', '1}\n\n{"n"', ':2}\n', bytes.slice(0, cut), bytes.slice(cut))));
    assert.deepEqual(values, [{ n: 1 }, { n: 2 }, { a: 'é' }]);
  });

  it('a stream ending inside a line was cut: WATCH_INTERRUPTED', async () => {
    await assert.rejects(collect(ndjson(chunks('{"n":1}\n{"n":'))), (e: RavenError) => e.code === 'WATCH_INTERRUPTED');
  });

  it('a line that is not JSON: KUBE_DECODE', async () => {
    await assert.rejects(collect(ndjson(chunks('nope\n'))), (e: RavenError) => e.code === 'KUBE_DECODE');
  });
});

describe('watchEvents', () => {
  function body(...parts: string[]) {
    const state = { destroyed: false };
    return Object.assign(chunks(...parts), { state, destroy: () => (state.destroyed = true) });
  }

  it('yields events (ERROR included) and destroys the body', async () => {
    const b = body(
      '{"type":"ADDED","object":{"metadata":{"name":"a"}}}\n{"type":"ERROR","object":{"kind":"Status","code":410}}\n',
    );
    const events = await collect(watchEvents(b, '/w'));
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'ERROR'],
    );
    assert.ok(b.state.destroyed);
  });

  it('a failing body becomes WATCH_INTERRUPTED with the cause, unless the signal aborted', async () => {
    async function* failing(): AsyncGenerator<Uint8Array> {
      await Promise.resolve();
      yield new TextEncoder().encode('{"type":"ADDED","object":{"metadata":{}}}\n');
      throw Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    }
    const cause = await collect(watchEvents(Object.assign(failing(), { destroy() {} }), '/w')).then(
      () => assert.fail('should throw'),
      (e: RavenError) => (assert.equal(e.code, 'WATCH_INTERRUPTED'), e.cause as Error),
    );
    assert.equal(cause.message, 'other side closed');
    const ac = new AbortController();
    ac.abort();
    assert.equal((await collect(watchEvents(Object.assign(failing(), { destroy() {} }), '/w', ac.signal))).length, 1);
  });

  it('refuses lines that are not watch events', async () => {
    await assert.rejects(
      collect(watchEvents(body('{"kind":"Status"}\n'), '/w')),
      (e: RavenError) => e.code === 'KUBE_DECODE',
    );
  });
});
