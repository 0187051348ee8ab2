import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { mergePatch } from './dry-run.ts';

describe('mergePatch', () => {
  it('is RFC 7386: null deletes, objects merge, anything else replaces, and neither input changes', () => {
    const target = { metadata: { annotations: { a: '1', b: '2' }, finalizers: ['x'] }, spec: { n: 1 } };
    const patch = { metadata: { annotations: { b: null, c: '3' }, finalizers: ['y'] } };
    assert.deepEqual(mergePatch(target, patch), {
      metadata: { annotations: { a: '1', c: '3' }, finalizers: ['y'] },
      spec: { n: 1 },
    });
    assert.deepEqual(target.metadata.annotations, { a: '1', b: '2' });
    assert.deepEqual(mergePatch({ a: 1 }, 'x'), 'x');
  });
});
