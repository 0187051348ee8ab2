/**
 * Runs every step of a teardown in order, each even when an earlier one failed, then throws what failed (the one
 * error, or an AggregateError). A cloud clean-up that fails (a 409 while a port is still going) must not skip the
 * steps after it: a server or process left open keeps the test file's process alive, and the run waits for it.
 */
export async function teardown(...steps: (() => unknown)[]): Promise<void> {
  const errors: unknown[] = [];
  for (const step of steps) {
    try {
      await step();
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length === 1) throw errors[0];
  if (errors.length > 1) throw new AggregateError(errors, `${errors.length} teardown steps failed`);
}
