// Shared by this folder's tests only (not exported from index.ts): inputs are deep-frozen copies, so any mutation
// by an engine throws, and results are checked to share nothing with those frozen inputs.
import assert from 'node:assert/strict';
import { deepFreeze } from '../../src/core/index.ts';
import { PatchError } from '@raven/apiserver/patch/errors.ts';

/** A deep-frozen copy of `value`, typed loosely because the engines take `unknown`. */
export function frozen(value: unknown): unknown {
  return deepFreeze(structuredClone(value));
}

/** Asserts that nothing reachable from `value` is frozen, i.e. the result shares no structure with frozen inputs. */
export function assertUnshared(value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  assert.equal(Object.isFrozen(value), false, 'result shares structure with a frozen input');
  for (const child of Object.values(value)) assertUnshared(child);
}

/** Asserts that `fn` throws a PatchError with `status` whose message matches every pattern. */
export function assertPatchError(fn: () => unknown, status: 400 | 422, ...patterns: RegExp[]): PatchError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof PatchError, `expected a PatchError, got ${String(caught)}`);
  assert.equal(caught.status, status, caught.message);
  assert.equal(caught.code, status === 400 ? 'PATCH_INVALID' : 'PATCH_FAILED');
  assert.equal(caught.reason, status === 400 ? 'BadRequest' : 'Invalid');
  for (const pattern of patterns) assert.match(caught.message, pattern);
  return caught;
}
