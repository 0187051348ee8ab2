import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { boolParam } from './read.ts';

describe('boolParam', () => {
  it('reads booleans as the real server does: absent, 0 and false (any case) are false, anything else true', () => {
    const cases: Array<[string, boolean]> = [
      ['', false],
      ['x=false', false],
      ['x=False', false],
      ['x=FALSE', false],
      ['x=0', false],
      ['x=true', true],
      ['x=True', true],
      ['x=1', true],
      ['x=', true],
      ['x=yes', true],
    ];
    for (const [query, expected] of cases) assert.equal(boolParam(new URLSearchParams(query), 'x'), expected, query);
  });
});
