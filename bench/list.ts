/**
 * List latency: LIST of N running pods in one namespace over HTTP, whole, and walked in `limit` pages. The client
 * reads the body bytes but does not parse the JSON (only the `continue` token, from the head of the body), so the
 * time is the server's plus the loopback transfer. A third walk writes once between pages, so every page after the
 * first is served from a snapshot older than the current resourceVersion (an informer relisting under load).
 */
import { performance } from 'node:perf_hooks';
import type { Agent } from 'undici';
import { call, callOk, keepAliveAgent, type Target } from './http.ts';
import { startServerProcess } from './processes.ts';
import { fmtBytes, fmtInt, fmtMs, percentile, type Row } from './support.ts';

export interface ListOptions {
  pods: number;
  pageSize: number;
  /** Full lists / walks per condition (fewer if the cap is hit). */
  repeats: number;
  /** Hard cap per condition (the walks already started finish). */
  capMs: number;
}

const namespace = 'list';

interface Walk {
  ms: number;
  pages: number;
  bytes: number;
  items: number;
}

function continueOf(head: string): string | undefined {
  return /"continue":"([^"]+)"/.exec(head)?.[1];
}

async function walk(
  agent: Agent,
  target: Target,
  limit: number,
  between?: (page: number) => Promise<void>,
): Promise<Walk> {
  const start = performance.now();
  let token: string | undefined;
  let pages = 0;
  let bytes = 0;
  let items = 0;
  let excluded = 0;
  do {
    const query = limit > 0 ? `?limit=${limit}${token ? `&continue=${encodeURIComponent(token)}` : ''}` : '';
    const text = await callOk(agent, target, 'GET', `/api/v1/namespaces/${namespace}/pods${query}`, 200);
    pages++;
    bytes += Buffer.byteLength(text);
    // Count items cheaply: every pod has exactly one `"kind":"Pod"` (lists say PodList).
    items += text.split('"kind":"Pod"').length - 1;
    // metadata precedes items in the list, so the token is near the head.
    token = continueOf(text.slice(0, 2048));
    if (token && between) {
      const t0 = performance.now();
      await between(pages);
      excluded += performance.now() - t0;
    }
  } while (token);
  return { ms: performance.now() - start - excluded, pages, bytes, items };
}

async function repeat(options: ListOptions, run: () => Promise<Walk>): Promise<Walk[]> {
  const out: Walk[] = [await run()]; // the first one warms up, and is discarded unless it is the only one
  const stopAt = performance.now() + options.capMs;
  for (let i = 0; i < options.repeats && performance.now() < stopAt; i++) out.push(await run());
  return out.length > 1 ? out.slice(1) : out;
}

function describe(walks: Walk[], expected: number): string {
  const ms = walks.map((w) => w.ms);
  const w = walks[0]!;
  const complete = w.items === expected ? '' : ` (got ${fmtInt(w.items)} of ${fmtInt(expected)} items!)`;
  return `p50 ${fmtMs(percentile(ms, 50))}, max ${fmtMs(Math.max(...ms))} per full walk over ${w.pages} request${w.pages === 1 ? '' : 's'}, ${fmtBytes(w.bytes)}${complete}`;
}

export async function benchList(options: ListOptions): Promise<Row[]> {
  const server = await startServerProcess({ tls: 'none' });
  const agent = keepAliveAgent(server, 1);
  try {
    await server.seedPods(namespace, options.pods, 60_000);
    const full = await repeat(options, () => walk(agent, server, 0));
    const paged = await repeat(options, () => walk(agent, server, options.pageSize));
    // One pod update between pages: the same table changes, so later pages read at an older resourceVersion.
    let tick = 0;
    const touch = async (): Promise<void> => {
      const path = `/api/v1/namespaces/${namespace}/pods/pod-00000`;
      const pod = JSON.parse(await callOk(agent, server, 'GET', path, 200)) as {
        metadata: { labels?: Record<string, string> };
      };
      pod.metadata.labels = { ...pod.metadata.labels, tick: String(tick++) };
      const reply = await call(agent, server, 'PUT', path, pod);
      if (reply.status !== 200) throw new Error(`touch: HTTP ${reply.status}`);
    };
    const churned = await repeat(options, () => walk(agent, server, options.pageSize, touch));
    const condition = `${fmtInt(options.pods)} running pods in one namespace`;
    return [
      { benchmark: 'LIST pods', condition: `${condition}, whole list`, result: describe(full, options.pods) },
      {
        benchmark: 'LIST pods',
        condition: `${condition}, limit=${options.pageSize} pages`,
        result: describe(paged, options.pods),
      },
      {
        benchmark: 'LIST pods',
        condition: `${condition}, limit=${options.pageSize} pages, 1 pod update between pages`,
        result: `${describe(churned, options.pods)} (the ${churned[0]!.pages - 1} GET+PUT between pages not counted)`,
      },
    ];
  } finally {
    await agent.close();
    await server.stop();
  }
}
