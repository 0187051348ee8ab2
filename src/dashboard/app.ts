import { createHash, timingSafeEqual } from 'node:crypto';
import { silentLogger, type Clock, type Logger } from '../core/index.ts';
import type { ObjectDetail, TopologySource } from './shape.ts';
import { SnapshotHub } from './stream.ts';

/** The page's static files, bundled at build time (`assets.ts`). */
export interface TopologyAssets {
  'index.html': string;
  'app.js': string;
  'app.css': string;
}

export interface TopologyAppOptions {
  source: TopologySource;
  assets: () => Promise<TopologyAssets>;
  /** Required as `Authorization: Bearer <token>` on the API when set (the view shows addresses and ids). */
  token?: string | undefined;
  intervalMs?: number;
  maxClients?: number;
  clock?: Clock;
  logger?: Logger;
}

export type TopologyApp = ((request: Request) => Promise<Response>) & {
  /** Ends the open streams (before the server closes). */
  close(): void;
};

/** Where the view lives on a server: every path it serves starts with it. */
export const TOPOLOGY_PATH = '/topology';

const securityHeaders = {
  'x-content-type-options': 'nosniff',
  'cache-control': 'no-store',
  // Everything the page loads is its own: no CDN, no inline script.
  'content-security-policy': "default-src 'self'; style-src 'self'; img-src 'self' data:; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
};

const types: Record<keyof TopologyAssets, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};

function respond(
  status: number,
  body: ConstructorParameters<typeof Response>[0],
  type: string,
  extra: Record<string, string> = {},
): Response {
  return new Response(body, { status, headers: { ...securityHeaders, 'content-type': type, ...extra } });
}

const json = (status: number, value: unknown): Response =>
  respond(status, JSON.stringify(value), 'application/json; charset=utf-8');
const problem = (status: number, message: string, extra: Record<string, string> = {}): Response =>
  respond(status, JSON.stringify({ error: message }), 'application/json; charset=utf-8', extra);

const kinds = new Set<ObjectDetail['kind']>(['pod', 'service', 'namespace', 'networkpolicy']);
/** Kubernetes names: DNS labels and subdomains, at most 253 characters. */
const namePattern = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/**
 * The live topology view as a `fetch(Request) → Response` app, under {@link TOPOLOGY_PATH}:
 * - `GET /topology/` the page, `/topology/app.js`, `/topology/app.css` its bundle (no data in them: served without the
 *   token, so the page can ask for it);
 * - `GET /topology/api/snapshot` the snapshot (docs/topology.md);
 * - `GET /topology/api/events` Server-Sent Events: `snapshot` at once, then on each change (coalesced, see
 *   {@link SnapshotHub});
 * - `GET /topology/api/object/<kind>/<namespace>/<name>` one object and Raven's record of it (`kind` pod, service,
 *   networkpolicy; `namespace/-/<name>` for a namespace).
 * With a token, the API answers 401 without `Authorization: Bearer <token>`. Unknown paths are 404, other methods 405.
 *
 * @example
 * const app = createTopologyApp({ source, assets });
 * const res = await app(new Request('http://raven/topology/api/snapshot'));
 */
export function createTopologyApp(options: TopologyAppOptions): TopologyApp {
  const logger = options.logger ?? silentLogger;
  const hub = new SnapshotHub({
    snapshot: () => options.source.snapshot(),
    ...(options.intervalMs !== undefined ? { intervalMs: options.intervalMs } : {}),
    ...(options.maxClients !== undefined ? { maxClients: options.maxClients } : {}),
    ...(options.clock ? { clock: options.clock } : {}),
    logger,
  });
  const wanted = options.token ? digest(options.token) : undefined;

  function authorized(request: Request): boolean {
    if (!wanted) return true;
    const header = request.headers.get('authorization') ?? '';
    const given = /^Bearer (\S{1,4096})$/i.exec(header)?.[1];
    // Hashes of equal length: the comparison takes the same time whatever the token given.
    return given !== undefined && timingSafeEqual(digest(given), wanted);
  }

  function api(parts: string[], head: boolean): Response {
    const [what, kind, namespace, name, ...rest] = parts;
    if (what === 'snapshot' && kind === undefined)
      return respond(200, hub.current(), 'application/json; charset=utf-8');
    if (what === 'events' && kind === undefined) {
      // A HEAD opens no stream: it would hold a client slot that nothing reads.
      if (head) return respond(200, null, 'text/event-stream; charset=utf-8');
      const body = hub.open();
      if (!body) return problem(503, 'too many topology streams open', { 'retry-after': '5' });
      return respond(200, body, 'text/event-stream; charset=utf-8', { connection: 'keep-alive' });
    }
    if (what !== 'object' || rest.length > 0 || name === undefined || namespace === undefined) return notFound();
    if (!kinds.has(kind as ObjectDetail['kind'])) return notFound();
    // A namespace is named by `-/<name>`: it has no namespace of its own.
    const clusterScoped = kind === 'namespace';
    if ((clusterScoped ? namespace !== '-' : !namePattern.test(namespace)) || !namePattern.test(name))
      return notFound();
    const detail = options.source.detail(kind as ObjectDetail['kind'], clusterScoped ? '' : namespace, name);
    return detail ? json(200, detail) : notFound();
  }

  const notFound = (): Response => problem(404, 'not found');

  const app = async (request: Request): Promise<Response> => {
    const { pathname } = new URL(request.url);
    if (pathname !== TOPOLOGY_PATH && !pathname.startsWith(`${TOPOLOGY_PATH}/`)) return notFound();
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return problem(405, 'method not allowed', { allow: 'GET, HEAD' });
    if (pathname === TOPOLOGY_PATH) return respond(308, null, 'text/plain', { location: `${TOPOLOGY_PATH}/` });
    const parts = pathname.slice(TOPOLOGY_PATH.length + 1).split('/');
    const [first = '', ...rest] = parts;
    if (first === 'api') {
      if (!authorized(request)) return problem(401, 'a bearer token is required', { 'www-authenticate': 'Bearer' });
      return api(rest, request.method === 'HEAD');
    }
    if (rest.length > 0) return notFound();
    const file = first === '' ? 'index.html' : first;
    if (!Object.hasOwn(types, file)) return notFound();
    const assets = await options.assets();
    return respond(200, assets[file as keyof TopologyAssets], types[file as keyof TopologyAssets]);
  };
  return Object.assign(app, { close: () => hub.close() });
}
