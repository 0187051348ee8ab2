/**
 * Protobuf against JSON on the wire: a LIST of N pods and a watch of N events (the synthetic ADDED events of a watch
 * from resourceVersion 0), each asked for once as `application/json` and once as `application/vnd.kubernetes.protobuf`.
 * Bytes are the response body; ms is request to last byte (p50 of the repeats after one warm-up); "decode" is the
 * client turning those bytes back into objects (JSON.parse, or this repository's protobuf decoder).
 */
import { performance } from 'node:perf_hooks';
import { request, type Agent } from 'undici';
import { decodeObject, decodeWatchFrames, PROTOBUF } from '@raven/apiserver';
import { keepAliveAgent, type Target } from './http.ts';
import { startServerProcess } from './processes.ts';
import { fmtBytes, fmtInt, fmtMs, percentile, type Row } from './support.ts';

export interface ProtobufBenchOptions {
  pods: number;
  repeats: number;
  capMs: number;
}

const namespace = 'proto';

async function fetchBody(
  agent: Agent,
  target: Target,
  path: string,
  accept: string,
): Promise<{ ms: number; bytes: Buffer }> {
  const t0 = performance.now();
  const res = await request(`${target.url}${path}`, {
    dispatcher: agent,
    headers: { authorization: `Bearer ${target.token}`, accept },
  });
  if (res.statusCode !== 200) throw new Error(`GET ${path}: HTTP ${res.statusCode}`);
  const bytes = Buffer.from(await res.body.arrayBuffer());
  return { ms: performance.now() - t0, bytes };
}

/** Reads a watch until `events` have arrived, then cuts it; the time is request to the last event's last byte. */
async function watchBody(
  agent: Agent,
  target: Target,
  accept: string,
  events: number,
): Promise<{ ms: number; bytes: Buffer }> {
  const abort = new AbortController();
  const t0 = performance.now();
  const res = await request(`${target.url}/api/v1/namespaces/${namespace}/pods?watch=1&resourceVersion=0`, {
    dispatcher: agent,
    headers: { authorization: `Bearer ${target.token}`, accept },
    signal: abort.signal,
  });
  const chunks: Buffer[] = [];
  let size = 0;
  let seen = 0;
  let pos = 0;
  const protobuf = accept.startsWith(PROTOBUF);
  try {
    for await (const chunk of res.body) {
      const buf = chunk as Buffer;
      chunks.push(buf);
      size += buf.length;
      if (protobuf) {
        const all = Buffer.concat(chunks, size);
        while (pos + 4 <= all.length && pos + 4 + all.readUInt32BE(pos) <= all.length) {
          pos += 4 + all.readUInt32BE(pos);
          seen++;
        }
      } else {
        for (const byte of buf) if (byte === 0x0a) seen++;
      }
      if (seen >= events) break;
    }
  } finally {
    abort.abort();
  }
  return { ms: performance.now() - t0, bytes: Buffer.concat(chunks, size) };
}

async function measure(
  options: ProtobufBenchOptions,
  run: () => Promise<{ ms: number; bytes: Buffer }>,
  decode: (bytes: Buffer) => unknown,
): Promise<string> {
  const runs = [await run()];
  const stopAt = performance.now() + options.capMs;
  for (let i = 0; i < options.repeats && performance.now() < stopAt; i++) runs.push(await run());
  const measured = runs.length > 1 ? runs.slice(1) : runs;
  const bytes = measured[0]!.bytes;
  const decodeMs: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t0 = performance.now();
    decode(bytes);
    decodeMs.push(performance.now() - t0);
  }
  return `${fmtBytes(bytes.length)}, p50 ${fmtMs(
    percentile(
      measured.map((r) => r.ms),
      50,
    ),
  )} (decode ${fmtMs(percentile(decodeMs, 50))})`;
}

export async function benchProtobuf(options: ProtobufBenchOptions): Promise<Row[]> {
  const server = await startServerProcess({ tls: 'none' });
  const agent = keepAliveAgent(server, 1);
  try {
    await server.seedPods(namespace, options.pods, 60_000);
    const rows: Row[] = [];
    const list = `${fmtInt(options.pods)} running pods, LIST`;
    const watch = `watch of ${fmtInt(options.pods)} ADDED events`;
    const lines = (bytes: Buffer) =>
      bytes
        .toString()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown);
    for (const [name, accept] of [
      ['JSON', 'application/json'],
      ['protobuf', `${PROTOBUF},application/json`],
    ] as const) {
      const protobuf = name === 'protobuf';
      rows.push({
        benchmark: 'protobuf vs JSON',
        condition: `${list}, ${name}`,
        result: await measure(
          options,
          () => fetchBody(agent, server, `/api/v1/namespaces/${namespace}/pods`, accept),
          (bytes) => (protobuf ? decodeObject(bytes) : JSON.parse(bytes.toString())),
        ),
      });
      rows.push({
        benchmark: 'protobuf vs JSON',
        condition: `${watch}, ${name}`,
        result: await measure(
          options,
          () => watchBody(agent, server, protobuf ? `${PROTOBUF};stream=watch` : 'application/json', options.pods),
          (bytes) => (protobuf ? decodeWatchFrames(bytes) : lines(bytes)),
        ),
      });
    }
    return rows;
  } finally {
    await agent.close();
    await server.stop();
  }
}
