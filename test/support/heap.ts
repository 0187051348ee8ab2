/**
 * Heap measurements for the tests that keep a cache small: V8's `gc()` without `--expose-gc` on the command line (the
 * flag set at run time reaches a new context), and the heap a structure keeps per item after forced collections.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

/**
 * The heap bytes per item that what `build(count)` returns keeps alive, beyond what `setup(count)` made before (inputs
 * the structure refers to, not measured).
 */
export function heapPerItem<S, T>(count: number, setup: (count: number) => S, build: (input: S) => T): number {
  const input = setup(count);
  const before = heapAfterGc();
  const kept = build(input);
  const after = heapAfterGc();
  // Both stay alive until measured.
  if (kept === undefined) throw new Error('nothing built');
  void input;
  return (after - before) / count;
}
