import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { patchTypeOf } from './content-type.ts';

describe('patchTypeOf', () => {
  it('maps the four patch media types', () => {
    assert.equal(patchTypeOf('application/json-patch+json'), 'json');
    assert.equal(patchTypeOf('application/merge-patch+json'), 'merge');
    assert.equal(patchTypeOf('application/strategic-merge-patch+json'), 'strategic');
    assert.equal(patchTypeOf('application/apply-patch+yaml'), 'apply');
  });

  it('ignores parameters, case and whitespace', () => {
    assert.equal(patchTypeOf('application/merge-patch+json; charset=utf-8'), 'merge');
    assert.equal(patchTypeOf(' Application/Strategic-Merge-Patch+JSON ;charset=UTF-8'), 'strategic');
  });

  it('rejects anything else', () => {
    assert.equal(patchTypeOf('application/json'), undefined);
    assert.equal(patchTypeOf('application/yaml'), undefined);
    assert.equal(patchTypeOf(''), undefined);
    assert.equal(patchTypeOf('application/merge-patch+jsonx'), undefined);
  });
});
