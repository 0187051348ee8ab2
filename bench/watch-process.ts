/**
 * Child-process entry: opens N watch streams over HTTP and counts the NDJSON lines each receives, so reading them
 * costs neither the server's nor the writer's event loop. Started by `startWatchProcess` (processes.ts).
 */
import { performance } from 'node:perf_hooks';
import { Agent, request } from 'undici';
import type { WatchCommand, WatchOptions, WatchReply } from './processes.ts';

const options = JSON.parse(process.argv[2] ?? '{}') as WatchOptions;
// One connection per watch (no pipelining); no body timeout, a watch is quiet between events.
const agent = new Agent({
  bodyTimeout: 0,
  headersTimeout: 30_000,
  ...(options.caPem ? { connect: { ca: options.caPem } } : {}),
});
const lines = new Array<number>(options.count).fill(0);
let bytes = 0;
let ended = 0;
let drain: { expected: number; start: number; timer: NodeJS.Timeout } | undefined;

function reply(message: WatchReply): void {
  process.send?.(message);
}

function finishDrainIfDone(force: boolean): void {
  if (!drain) return;
  const min = Math.min(...lines);
  if (min < drain.expected && !force) return;
  clearTimeout(drain.timer);
  reply({
    type: 'drained',
    minLines: min,
    totalLines: lines.reduce((a, b) => a + b, 0),
    totalBytes: bytes,
    waitedMs: performance.now() - drain.start,
    ended,
  });
  drain = undefined;
}

async function openWatch(i: number): Promise<void> {
  const { statusCode, body } = await request(`${options.url}${options.path}`, {
    headers: { authorization: `Bearer ${options.token}`, accept: 'application/json' },
    dispatcher: agent,
  });
  if (statusCode !== 200) throw new Error(`watch ${i}: HTTP ${statusCode} ${await body.text()}`);
  body.on('data', (chunk: Buffer) => {
    bytes += chunk.byteLength;
    let n = 0;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) n++;
    lines[i]! += n;
    if (n > 0 && drain) finishDrainIfDone(false);
  });
  body.on('end', () => ended++);
  body.on('error', () => ended++);
}

process.on('message', (raw) => {
  const command = raw as WatchCommand;
  if (command.type === 'drain') {
    drain = {
      expected: command.expected,
      start: performance.now(),
      timer: setTimeout(() => finishDrainIfDone(true), command.timeoutMs),
    };
    finishDrainIfDone(false);
  } else {
    void agent.destroy().finally(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));

try {
  // Open in batches so a thousand connections do not all arrive in the same tick.
  for (let i = 0; i < options.count; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, options.count - i) }, (_, k) => openWatch(i + k)));
  }
  reply({ type: 'ready' });
} catch (err) {
  console.error('bench watch process:', err);
  process.exit(1);
}
