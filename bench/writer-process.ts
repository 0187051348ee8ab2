/**
 * Child-process entry: writes ConfigMaps over a keep-alive pool for the informer benchmarks, creates first and then
 * rounds of updates (PUT with the resourceVersion of the object's previous write, as a controller would). Started by
 * `startWriterProcess` (writer.ts).
 */
import { performance } from 'node:perf_hooks';
import { callOk, ensureNamespace, keepAliveAgent, resourceVersionOf } from './http.ts';
import { benchConfigMap, epochMs, runPool } from './support.ts';
import type { WriterCommand, WriterOptions, WriterReply } from './writer.ts';

const options = JSON.parse(process.argv[2] ?? '{}') as WriterOptions;
const agent = keepAliveAgent(options, options.concurrency);
const base = `/api/v1/namespaces/${options.namespace}/configmaps`;

function reply(message: WriterReply): void {
  process.send?.(message);
}

async function write(command: Extract<WriterCommand, { type: 'write' }>): Promise<void> {
  const start = performance.now();
  const stopAt = start + command.capMs;
  const versions = new Array<string>(command.objects).fill('');
  let lastWriteAt = epochMs();
  const name = (i: number): string => `${command.prefix}-${i}`;
  const creates = await runPool(command.objects, options.concurrency, command.capMs, async (i) => {
    versions[i] = resourceVersionOf(await callOk(agent, options, 'POST', base, 201, benchConfigMap(name(i))));
    lastWriteAt = epochMs();
  });
  let updates = 0;
  for (let round = 1; round <= command.updates && performance.now() < stopAt; round++) {
    const r = await runPool(creates.done, options.concurrency, stopAt - performance.now(), async (i) => {
      if (!versions[i]) return;
      versions[i] = resourceVersionOf(
        await callOk(agent, options, 'PUT', `${base}/${name(i)}`, 200, benchConfigMap(name(i), round, versions[i])),
      );
      lastWriteAt = epochMs();
    });
    updates += r.done;
  }
  reply({
    type: 'written',
    creates: creates.done,
    updates,
    elapsedMs: performance.now() - start,
    lastWriteAt,
    finalVersions: versions,
  });
}

process.on('message', (raw) => {
  const command = raw as WriterCommand;
  if (command.type === 'write') {
    write(command).catch((err: unknown) => {
      console.error('bench writer process:', err);
      process.exit(1);
    });
  } else {
    void agent.close().finally(() => process.exit(0));
  }
});
process.on('disconnect', () => process.exit(0));

await ensureNamespace(agent, options, options.namespace);
reply({ type: 'ready' });
