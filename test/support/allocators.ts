import assert from 'node:assert/strict';
import { RavenError } from '../../src/core/index.ts';

/** The code and message of the RavenError `fn` throws (fails the test when it throws nothing else). */
export function failure(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof RavenError);
    return { code: err.code, message: err.message };
  }
  return assert.fail('expected a RavenError');
}
