/**
 * node:test's `describe`, `it` and hooks, with a bound on every test: every test file imports them from here (lint
 * refuses `node:test` itself in a test).
 *
 * Why: Node 20's runner applies `--test-timeout` to each file's process as a whole, and a test file's own process
 * ignores it, so a test that waits for ever (a socket kept alive, a server never closed) ran until CI's limit and
 * named nothing. Here a test or hook without a timeout of its own gets the one of the nearest `describe` that states
 * one (as node:test itself would give it), or else `TEST_TIMEOUT_MS`. A `describe` without a timeout gets none: its
 * tests are bounded one by one, and the file as a whole by `npm run test:node`'s `--test-timeout`.
 * `RAVEN_TEST_TIMEOUT_MS` changes the default (e.g. to see a hang named in seconds).
 */
import * as nodeTest from 'node:test';

export const TEST_TIMEOUT_MS = Number(process.env.RAVEN_TEST_TIMEOUT_MS) || 120_000;

type SuiteFn = (s: nodeTest.SuiteContext) => void | Promise<void>;
type TestFn = (t: nodeTest.TestContext) => void | Promise<void>;

/** The timeouts stated by the `describe`s being built, innermost last (node:test builds a suite synchronously). */
const stated: number[] = [];

function bounded<O extends { timeout?: number }>(options: O | undefined): O {
  if (options?.timeout !== undefined || stated.length > 0) return options ?? ({} as O);
  return { ...options, timeout: TEST_TIMEOUT_MS } as O;
}

export function describe(name: string, fn: SuiteFn): void;
export function describe(name: string, options: nodeTest.TestOptions, fn: SuiteFn): void;
export function describe(name: string, a: nodeTest.TestOptions | SuiteFn, b?: SuiteFn): void {
  const [options, fn] = typeof a === 'function' ? [{}, a] : [a, b!];
  const own = options.timeout;
  void nodeTest.describe(name, options, (s) => {
    if (own !== undefined) stated.push(own);
    try {
      return fn(s);
    } finally {
      if (own !== undefined) stated.pop();
    }
  });
}

export function it(name: string, fn: TestFn): void;
export function it(name: string, options: nodeTest.TestOptions, fn: TestFn): void;
export function it(name: string, a: nodeTest.TestOptions | TestFn, b?: TestFn): void {
  const [options, fn] = typeof a === 'function' ? [undefined, a] : [a, b!];
  void nodeTest.it(name, bounded(options), fn);
}

function hook(register: typeof nodeTest.before) {
  return (fn: nodeTest.HookFn, options?: nodeTest.HookOptions): void => register(fn, bounded(options));
}

export const before = hook(nodeTest.before);
export const after = hook(nodeTest.after);
export const beforeEach = hook(nodeTest.beforeEach);
export const afterEach = hook(nodeTest.afterEach);
