import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { isOlderResourceVersion } from './resource-version.ts';

describe('isOlderResourceVersion', () => {
  it('compares decimal resourceVersions as numbers, beyond 2^53 too', () => {
    assert.equal(isOlderResourceVersion('9', '10'), true);
    assert.equal(isOlderResourceVersion('10', '9'), false);
    assert.equal(isOlderResourceVersion('10', '10'), false);
    assert.equal(isOlderResourceVersion('9007199254740993', '9007199254740994'), true);
  });

  it('never calls an opaque resourceVersion older', () => {
    assert.equal(isOlderResourceVersion('', '10'), false);
    assert.equal(isOlderResourceVersion('abc', '10'), false);
    assert.equal(isOlderResourceVersion('1', 'v2'), false);
    assert.equal(isOlderResourceVersion('-1', '2'), false);
  });
});
