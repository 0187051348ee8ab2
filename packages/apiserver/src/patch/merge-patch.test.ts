import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { applyMergePatch } from './merge-patch.ts';
import { assertUnshared, frozen } from '../../../../test/support/patch.ts';

function check(target: unknown, patch: unknown, expected: unknown): void {
  const result = applyMergePatch(frozen(target), frozen(patch));
  assert.deepEqual(result, expected);
  assertUnshared(result);
}

describe('applyMergePatch', () => {
  // RFC 7386 Appendix A, every example in order.
  const appendixA: [target: unknown, patch: unknown, result: unknown][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  for (const [i, [target, patch, result]] of appendixA.entries()) {
    it(`RFC 7386 appendix A example ${i + 1}: ${JSON.stringify(target)} + ${JSON.stringify(patch)}`, () => {
      check(target, patch, result);
    });
  }

  it('applies the RFC 7386 section 3 example', () => {
    check(
      {
        title: 'Goodbye!',
        author: { givenName: 'John', familyName: 'Doe' },
        tags: ['example', 'sample'],
        content: 'This will be unchanged',
      },
      { title: 'Hello!', phoneNumber: '+01-123-456-7890', author: { familyName: null }, tags: ['example'] },
      {
        title: 'Hello!',
        author: { givenName: 'John' },
        tags: ['example'],
        content: 'This will be unchanged',
        phoneNumber: '+01-123-456-7890',
      },
    );
  });

  it('merges labels of a Kubernetes object and leaves the rest alone', () => {
    check(
      { metadata: { name: 'p', labels: { a: '1', b: '2' } }, spec: { containers: [{ name: 'c' }] } },
      { metadata: { labels: { b: null, c: '3' } } },
      { metadata: { name: 'p', labels: { a: '1', c: '3' } }, spec: { containers: [{ name: 'c' }] } },
    );
  });

  it('treats a missing target as an empty document', () => {
    check(undefined, { a: { b: null, c: 1 } }, { a: { c: 1 } });
  });

  it('stores a "__proto__" key as data instead of changing the prototype', () => {
    const result = applyMergePatch({}, JSON.parse('{"__proto__": {"polluted": true}}')) as Record<string, unknown>;
    assert.equal(Object.getPrototypeOf(result), Object.prototype);
    assert.deepEqual(Object.keys(result), ['__proto__']);
    assert.equal((result as { polluted?: unknown }).polluted, undefined);
  });
});
