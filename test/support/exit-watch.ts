/**
 * Loaded into every test file's process (`--import`, by the test scripts in package.json): once the file's tests and
 * hooks are done, its process must exit. If it is still up `EXIT_GRACE_MS` later, something the tests started still
 * holds it (a server not closed, a socket, a child process): this names each such handle on stderr, kills the child
 * processes among them, and exits 1, so the runner fails the file by name instead of waiting for it until CI's limit.
 * In the runner's own process (no NODE_TEST_CONTEXT) it does nothing.
 */
import type { ChildProcess } from 'node:child_process';
import { Server, Socket } from 'node:net';
import { after } from 'node:test'; // eslint-disable-line no-restricted-imports -- a root-level hook, not a test

const EXIT_GRACE_MS = Number(process.env.RAVEN_TEST_EXIT_GRACE_MS) || 20_000;

/** A line naming a handle well enough to find the code that opened it. */
function describeHandle(handle: unknown): string {
  if (handle instanceof Server) {
    const address = handle.address();
    return `server listening on ${typeof address === 'string' ? address : `${address?.address}:${address?.port}`}`;
  }
  if (handle instanceof Socket) {
    if (handle.remotePort === undefined) return 'socket (not TCP: a pipe, or stdio)';
    return `socket ${handle.localAddress}:${handle.localPort} → ${handle.remoteAddress}:${handle.remotePort}`;
  }
  const child = handle as Partial<ChildProcess>;
  if (typeof child.pid === 'number' && Array.isArray(child.spawnargs))
    return `child process ${child.pid}: ${child.spawnargs.join(' ').slice(0, 200)}`;
  return (handle as object | undefined)?.constructor?.name ?? String(handle);
}

if (process.env.NODE_TEST_CONTEXT) {
  after(() => {
    setTimeout(() => {
      // Node's own list of what keeps the loop alive; the stdio pipes to the runner are always among them.
      const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
      const lines = handles.map(describeHandle).filter((line) => !line.startsWith('socket (not TCP'));
      process.stderr.write(
        `exit-watch: this test file's process was still up ${EXIT_GRACE_MS / 1000} s after its tests ended, held by:\n` +
          `${(lines.length ? lines : process.getActiveResourcesInfo()).map((l) => `  - ${l}\n`).join('')}`,
      );
      for (const handle of handles) {
        const child = handle as Partial<ChildProcess>;
        if (typeof child.pid === 'number' && typeof child.kill === 'function') child.kill('SIGKILL');
      }
      process.exit(1);
    }, EXIT_GRACE_MS).unref();
  });
}
