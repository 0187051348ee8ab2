import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { decodeMessage, encodeMessage } from './codec.ts';
import { decodeObject, decodeWatchFrames, encodeObject, encodeWatchFrame, readEnvelope } from './envelope.ts';
import { allMessages, messageSchema, type FieldSpec, type ScalarType } from './schema.ts';
import { formatDuration, parseDuration } from './time.ts';
import { protobufFixtures } from '../../../../test/support/protobuf-fixtures.ts';
import { seeded as rng } from '../../../../test/support/seeded.ts';

type Json = Record<string, unknown>;

/**
 * A random object in the canonical JSON form of `message` (what a real server would print): non-pointer scalars are
 * never zero (Go omits those), pointer scalars may be, zero Times are null, inline structs' fields sit in the parent.
 */
function randomMessage(message: string, random: () => number, depth: number, into: Json = {}): Json {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const int = (max: number) => 1 + Math.floor(random() * max);
  const scalar = (type: ScalarType, pointer: boolean): unknown => {
    const zero = pointer && random() < 0.3;
    switch (type) {
      case 'string':
        return zero ? '' : pick(['a', 'web', 'ünïcode ✓', 'x'.repeat(200), '10.0.0.1']);
      case 'i32':
        return zero ? 0 : pick([1, -1, 80, 2 ** 31 - 1, -(2 ** 31)]);
      case 'i64':
        return zero ? 0 : pick([1, -7, 2 ** 40, Number.MAX_SAFE_INTEGER]);
      case 'bool':
        return pointer ? random() < 0.5 : true;
      case 'f64':
        return zero ? 0 : pick([0.5, -1e300, 3.14159]);
      case 'bytes':
        return Buffer.from(Array.from({ length: int(40) }, () => Math.floor(random() * 256))).toString('base64');
      case 'time':
        return random() < 0.2 ? null : new Date(int(2e9) * 1000).toISOString().replace('.000Z', 'Z');
      case 'microtime':
        return new Date(int(2e9) * 1000).toISOString().replace('.000Z', `.${String(int(999_999)).padStart(6, '0')}Z`);
      case 'duration':
        return formatDuration(int(1e12) * 1000);
      case 'quantity':
        return pick(['100m', '1Gi', '2', '1.5']);
      case 'intstr':
        return random() < 0.5 ? pick([0, int(65535)]) : pick(['http', '25%', '']);
      case 'json':
        return { a: [1, 'two', { three: null }], b: true };
      case 'strings':
        return Array.from({ length: int(3) }, () => pick(['get', 'list', 'watch']));
    }
  };
  const value = (field: FieldSpec, type: FieldSpec['type'], nested: string | undefined): unknown =>
    type === 'message' ? randomMessage(nested!, random, depth + 1) : scalar(type, field.pointer);
  for (const field of messageSchema(message)!.fields) {
    if (field.inline) {
      randomMessage(field.message!, random, depth, into);
      continue;
    }
    if (random() < 0.35) continue;
    if ((field.type === 'message' || field.map?.type === 'message') && depth >= 4) continue;
    if (field.map) {
      into[field.name] = Object.fromEntries(
        Array.from({ length: int(2) }, (_, i) => [`k${i}`, value(field, field.map!.type, field.map!.message)]),
      );
    } else if (field.repeated) {
      into[field.name] = Array.from({ length: int(3) }, () => value(field, field.type, field.message));
    } else {
      into[field.name] = value(field, field.type, field.message);
    }
  }
  return into;
}

describe('protobuf codec', () => {
  it('JSON → protobuf → JSON is the identity for random objects of every message (200 seeds each)', () => {
    const messages = allMessages().filter((m) => m !== 'runtime.Unknown');
    assert.ok(messages.length > 250, `${messages.length} messages`);
    for (const message of messages) {
      for (let seed = 1; seed <= 200; seed++) {
        const obj = randomMessage(message, rng(seed), 0);
        const back = decodeMessage(encodeMessage(obj, message), message);
        assert.deepStrictEqual(back, obj, `${message}, seed ${seed}`);
      }
    }
  });

  it('JSON → protobuf → JSON is the identity for every fixture object of every served kind, in the envelope', () => {
    for (const fixture of protobufFixtures) {
      const body = encodeObject(fixture);
      const envelope = readEnvelope(body);
      assert.deepEqual([envelope.apiVersion, envelope.kind], [fixture.apiVersion, fixture.kind]);
      assert.deepStrictEqual(decodeObject(body), fixture, `${String(fixture.apiVersion)} ${String(fixture.kind)}`);
    }
  });

  it('decodes as Go does: zero value fields are omitted, pointer zeros kept, a zero Time is null, unknown fields skipped', () => {
    const pod = decodeObject(
      encodeObject({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: '', namespace: 'ns', creationTimestamp: null },
        spec: { hostNetwork: false, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', stdin: false }] },
      }),
    );
    assert.deepStrictEqual(pod, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'ns', creationTimestamp: null },
      spec: { terminationGracePeriodSeconds: 0, containers: [{ name: 'c' }] },
    });
    // A field number the table does not know (a newer API) is skipped.
    const bytes = encodeMessage({ name: 'x' }, 'meta.ObjectMeta');
    const withUnknown = Uint8Array.from([...bytes, (15 << 3) | 2, 1, 0x41]);
    assert.deepStrictEqual(decodeMessage(withUnknown, 'meta.ObjectMeta'), { name: 'x' });
  });

  it('frames watch events as length-delimited WatchEvents whose object is a full protobuf body', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', resourceVersion: '7' }, data: { a: 'b' } };
    const frame = encodeWatchFrame('ADDED', cm);
    assert.equal(new DataView(frame.buffer).getUint32(0), frame.length - 4);
    const stream = Uint8Array.from([...frame, ...encodeWatchFrame('DELETED', cm)]);
    assert.deepStrictEqual(decodeWatchFrames(stream), [
      { type: 'ADDED', object: cm },
      { type: 'DELETED', object: cm },
    ]);
  });

  it('refuses bodies without the magic, and kinds without a protobuf form', () => {
    assert.throws(() => decodeObject(Uint8Array.of(1, 2, 3)), /does not appear to be a protobuf message/);
    assert.throws(() => encodeObject({ apiVersion: 'example.com/v1', kind: 'Widget' }), /no protobuf form/);
    assert.throws(() => encodeObject({ apiVersion: 'meta.k8s.io/v1', kind: 'Table' }), /no protobuf form/);
  });

  it('formats and parses Go durations', () => {
    for (const [text, nanos] of [
      ['1h2m3.5s', 3723.5e9],
      ['0s', 0],
      ['1.5µs', 1500],
      ['-2m0s', -120e9],
    ] as const) {
      assert.equal(parseDuration(text), nanos, text);
      assert.equal(formatDuration(nanos), text);
    }
  });
});
