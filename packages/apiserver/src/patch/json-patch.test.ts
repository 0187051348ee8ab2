import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { applyJsonPatch } from './json-patch.ts';
import { assertPatchError, assertUnshared, frozen } from '../../../../test/support/patch.ts';

function check(target: unknown, ops: unknown, expected: unknown): void {
  const result = applyJsonPatch(frozen(target), frozen(ops));
  assert.deepEqual(result, expected);
  assertUnshared(result);
}

describe('applyJsonPatch: RFC 6902 appendix A', () => {
  it('A.1 adds an object member', () => {
    check({ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }], { baz: 'qux', foo: 'bar' });
  });
  it('A.2 adds an array element', () => {
    check({ foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }], { foo: ['bar', 'qux', 'baz'] });
  });
  it('A.3 removes an object member', () => {
    check({ baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { foo: 'bar' });
  });
  it('A.4 removes an array element', () => {
    check({ foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }], { foo: ['bar', 'baz'] });
  });
  it('A.5 replaces a value', () => {
    check({ baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }], { baz: 'boo', foo: 'bar' });
  });
  it('A.6 moves a value', () => {
    check(
      { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } },
      [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
      { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } },
    );
  });
  it('A.7 moves an array element', () => {
    check({ foo: ['all', 'grass', 'cows', 'eat'] }, [{ op: 'move', from: '/foo/1', path: '/foo/3' }], {
      foo: ['all', 'cows', 'eat', 'grass'],
    });
  });
  it('A.8 passes tests', () => {
    const doc = { baz: 'qux', foo: ['a', 2, 'c'] };
    check(
      doc,
      [
        { op: 'test', path: '/baz', value: 'qux' },
        { op: 'test', path: '/foo/1', value: 2 },
      ],
      doc,
    );
  });
  it('A.9 fails a test with 422', () => {
    assertPatchError(
      () => applyJsonPatch(frozen({ baz: 'qux' }), [{ op: 'test', path: '/baz', value: 'bar' }]),
      422,
      /operation 0 \(test \/baz\)/,
      /"qux"/,
    );
  });
  it('A.10 adds a nested member object', () => {
    check({ foo: 'bar' }, [{ op: 'add', path: '/child', value: { grandchild: {} } }], {
      foo: 'bar',
      child: { grandchild: {} },
    });
  });
  it('A.11 ignores unrecognised members of an operation', () => {
    check({ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }], { foo: 'bar', baz: 'qux' });
  });
  it('A.12 refuses to add to a nonexistent target', () => {
    assertPatchError(
      () => applyJsonPatch(frozen({ foo: 'bar' }), [{ op: 'add', path: '/baz/bat', value: 'qux' }]),
      422,
      /operation 0 \(add \/baz\/bat\)/,
      /does not exist/,
    );
  });
  it('A.14 unescapes ~01 as "~1", not "/"', () => {
    const doc = { '/': 9, '~1': 10 };
    check(doc, [{ op: 'test', path: '/~01', value: 10 }], doc);
  });
  it('A.15 compares strings and numbers strictly', () => {
    assertPatchError(
      () => applyJsonPatch(frozen({ '/': 9, '~1': 10 }), [{ op: 'test', path: '/~01', value: '10' }]),
      422,
      /operation 0 \(test \/~01\)/,
    );
  });
  it('A.16 appends an array value with "-"', () => {
    check({ foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }], { foo: ['bar', ['abc', 'def']] });
  });
});

describe('applyJsonPatch: Kubernetes behaviour', () => {
  const pod = {
    metadata: { name: 'p', labels: { app: 'web' }, finalizers: ['a'] },
    spec: { containers: [{ name: 'c', image: 'nginx' }] },
  };

  it('treats replace of a missing object key as add', () => {
    check(pod, [{ op: 'replace', path: '/metadata/annotations', value: { x: 'y' } }], {
      ...pod,
      metadata: { ...pod.metadata, annotations: { x: 'y' } },
    });
  });

  it('fails remove of a missing key with 422 naming the operation and path', () => {
    const err = assertPatchError(
      () =>
        applyJsonPatch(frozen(pod), [
          { op: 'add', path: '/metadata/labels/tier', value: 'front' },
          { op: 'remove', path: '/metadata/labels/missing' },
        ]),
      422,
      /json patch operation 1 \(remove \/metadata\/labels\/missing\) failed/,
      /"missing" does not exist/,
    );
    assert.equal(err.field, '/metadata/labels/missing');
  });

  it('appends with "-" and inserts at an index', () => {
    check(
      pod,
      [
        { op: 'add', path: '/metadata/finalizers/-', value: 'b' },
        { op: 'add', path: '/metadata/finalizers/0', value: 'z' },
        { op: 'add', path: '/spec/containers/1', value: { name: 'd' } },
      ],
      {
        ...pod,
        metadata: { ...pod.metadata, finalizers: ['z', 'a', 'b'] },
        spec: { containers: [...pod.spec.containers, { name: 'd' }] },
      },
    );
  });

  it('replaces and removes array elements, and fails out-of-range or malformed indexes', () => {
    check(
      pod,
      [
        { op: 'replace', path: '/spec/containers/0/image', value: 'nginx:2' },
        { op: 'remove', path: '/metadata/finalizers/0' },
      ],
      {
        metadata: { ...pod.metadata, finalizers: [] },
        spec: { containers: [{ name: 'c', image: 'nginx:2' }] },
      },
    );
    for (const path of [
      '/metadata/finalizers/1',
      '/metadata/finalizers/01',
      '/metadata/finalizers/-',
      '/metadata/finalizers/-1',
    ]) {
      assertPatchError(
        () => applyJsonPatch(frozen(pod), [{ op: 'replace', path, value: 'x' }]),
        422,
        /is not an index/,
      );
      assertPatchError(() => applyJsonPatch(frozen(pod), [{ op: 'remove', path }]), 422, /is not an index/);
    }
    assertPatchError(
      () => applyJsonPatch(frozen(pod), [{ op: 'add', path: '/metadata/finalizers/2', value: 'x' }]),
      422,
      /is not an index/,
    );
  });

  it('replaces or tests the whole document at the root path', () => {
    check(
      pod,
      [
        { op: 'test', path: '', value: pod },
        { op: 'replace', path: '', value: { a: 1 } },
      ],
      { a: 1 },
    );
    assertPatchError(() => applyJsonPatch(frozen(pod), [{ op: 'remove', path: '' }]), 422, /whole document/);
  });

  it('copies values as independent copies and moves between parents', () => {
    const result = applyJsonPatch(frozen(pod), [
      { op: 'copy', from: '/metadata/labels', path: '/spec/selector' },
      { op: 'move', from: '/metadata/finalizers', path: '/spec/finalizers' },
    ]) as { metadata: { labels: Record<string, string> }; spec: { selector: Record<string, string> } };
    assert.deepEqual(result, {
      metadata: { name: 'p', labels: { app: 'web' } },
      spec: { containers: [{ name: 'c', image: 'nginx' }], selector: { app: 'web' }, finalizers: ['a'] },
    });
    result.spec.selector.app = 'changed';
    assert.equal(result.metadata.labels.app, 'web');
    assertUnshared(result);
  });

  it('moving to the same place is a no-op, moving into a child fails', () => {
    check(pod, [{ op: 'move', from: '/metadata', path: '/metadata' }], pod);
    assertPatchError(
      () => applyJsonPatch(frozen(pod), [{ op: 'move', from: '/metadata', path: '/metadata/inner' }]),
      422,
      /own child/,
    );
    assertPatchError(
      () => applyJsonPatch(frozen(pod), [{ op: 'copy', from: '/nope', path: '/x' }]),
      422,
      /"from" \/nope does not exist/,
    );
  });

  it('fails a test of a missing path', () => {
    assertPatchError(
      () => applyJsonPatch(frozen(pod), [{ op: 'test', path: '/status', value: null }]),
      422,
      /does not exist/,
    );
  });

  it('fails when a path goes through a primitive', () => {
    assertPatchError(
      () => applyJsonPatch(frozen(pod), [{ op: 'add', path: '/metadata/name/x', value: 1 }]),
      422,
      /\/metadata\/name is not an object or array/,
    );
  });

  it('applies all-or-nothing: a later failure leaves no partial result', () => {
    const target = structuredClone(pod);
    assertPatchError(
      () =>
        applyJsonPatch(target, [
          { op: 'add', path: '/metadata/labels/x', value: '1' },
          { op: 'test', path: '/metadata/name', value: 'q' },
        ]),
      422,
      /operation 1/,
    );
    assert.deepEqual(target, pod);
  });

  it('keeps "__proto__" as data', () => {
    const result = applyJsonPatch({}, [{ op: 'add', path: '/__proto__', value: { polluted: true } }]) as object;
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.deepEqual(Object.keys(result), ['__proto__']);
    assertPatchError(() => applyJsonPatch({}, [{ op: 'remove', path: '/constructor' }]), 422, /does not exist/);
  });
});

describe('applyJsonPatch: malformed bodies are 400', () => {
  const cases: [string, unknown, RegExp][] = [
    ['a body that is not an array', { op: 'add', path: '/a', value: 1 }, /must be an array/],
    ['an operation that is not an object', ['add'], /operation 0: an operation must be an object/],
    ['an unknown op', [{ op: 'increment', path: '/a' }], /operation 0: unknown op "increment"/],
    ['a missing op', [{ path: '/a' }], /unknown op undefined/],
    ['a missing path', [{ op: 'remove' }], /"path" must be a string/],
    ['a path without a leading slash', [{ op: 'remove', path: 'a' }], /"path" "a" is not a JSON pointer/],
    ['a bad ~ escape', [{ op: 'remove', path: '/a~2' }], /is not a JSON pointer/],
    ['add without value', [{ op: 'add', path: '/a' }], /add needs a "value"/],
    ['replace without value', [{ op: 'replace', path: '/a' }], /replace needs a "value"/],
    ['move without from', [{ op: 'move', path: '/a' }], /"from" undefined is not a JSON pointer/],
    [
      'a second bad operation',
      [
        { op: 'test', path: '/a', value: 1 },
        { op: 'copy', path: '/b', from: 3 },
      ],
      /operation 1: "from" 3/,
    ],
  ];
  for (const [name, body, pattern] of cases) {
    it(`rejects ${name}`, () => {
      assertPatchError(() => applyJsonPatch(frozen({ a: 1 }), frozen(body)), 400, pattern);
    });
  }

  it('validates every operation before applying any', () => {
    // Operation 0 would fail with 422, but the malformed operation 1 makes the whole body a 400.
    assertPatchError(
      () =>
        applyJsonPatch({}, [
          { op: 'remove', path: '/x' },
          { op: 'nope', path: '/x' },
        ]),
      400,
      /operation 1/,
    );
  });
});
