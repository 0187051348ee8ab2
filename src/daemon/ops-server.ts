import type { Registry } from 'prom-client';
import { errorMessage, silentLogger, type Logger } from '../core/index.ts';
import type { HealthChecks, HealthKind, HealthReport } from '../controller/index.ts';
import { TOPOLOGY_PATH, type TopologyApp } from '../dashboard/index.ts';
import { listen, type FetchHandler, type RunningHttpServer } from './http-server.ts';

export interface OpsAppOptions {
  /** The manager's checks: `healthz` serves `/healthz` and `/livez`, `readyz` serves `/readyz`. */
  health: HealthChecks;
  /** Served at `/metrics`. */
  registry: Registry;
  /** Failing checks are logged here at debug (a kubelet probing a sick pod would flood higher levels). */
  logger?: Logger;
  /** With `ops.topology` (and always in `raven dev`): the live topology view, served under `/topology/`. */
  topology?: TopologyApp | undefined;
}

export interface ListenOpsOptions extends OpsAppOptions {
  /** Loopback by default: expose it (`0.0.0.0`) only where the kubelet or Prometheus must reach it. */
  host?: string;
  port: number;
}

/** Path → the checks it runs and the name its summary line uses (kube-apiserver serves `/livez` from its own set). */
const endpoints: Record<string, HealthKind> = { healthz: 'healthz', livez: 'healthz', readyz: 'readyz' };

const plain = { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' };

function text(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...plain, ...headers } });
}

/** Go's `http.Error` bodies, which is what a Kubernetes component answers with. */
const notFound = (): Response => text(404, '404 page not found\n');

/**
 * The body kube-apiserver's health handler writes (`k8s.io/apiserver/pkg/server/healthz`): a line per check in
 * registration order, `[+]name excluded: ok` for skipped ones, a warning for exclusions that matched nothing, then
 * the summary. Unlike kube-apiserver the reason is shown, not withheld: this server is private (loopback by default);
 * and a passing check's note follows its `ok` (`[+]leader-election ok (standby)`).
 */
function verboseBody(endpoint: string, names: string[], report: HealthReport, excluded: Set<string>): string {
  const results = new Map(report.checks.map((c) => [c.name, c]));
  const unmatched = new Set(excluded);
  const lines: string[] = [];
  for (const name of names) {
    const check = results.get(name);
    if (excluded.has(name)) {
      unmatched.delete(name);
      lines.push(`[+]${name} excluded: ok`);
    } else if (check) {
      lines.push(
        check.ok
          ? `[+]${name} ok${check.note ? ` (${check.note})` : ''}`
          : `[-]${name} failed: ${check.reason ?? 'failed'}`,
      );
    }
  }
  if (unmatched.size > 0)
    lines.push(
      `warn: some health checks cannot be excluded: no matches for ${[...unmatched].map((n) => `"${n}"`).join(',')}`,
    );
  lines.push(`${endpoint} check ${report.ok ? 'passed' : 'failed'}`);
  return lines.join('\n') + '\n';
}

/**
 * The operational endpoints `raven run` serves, as a `fetch(Request) → Response` app, with kube-apiserver's semantics
 * so kubelet probes and tooling written for Kubernetes components work unchanged:
 * - `GET /healthz`, `/livez`, `/readyz`: 200 `ok`, or 500 listing every check (`[-]name failed: reason`) when one
 *   fails; `?verbose` lists them on success too; `?exclude=name` (repeatable) skips a check.
 * - `GET /healthz/<name>` (and `/livez/<name>`, `/readyz/<name>`): that check alone, 200 `ok` or 500
 *   `internal server error: reason`; 404 for a name not registered.
 * - `GET /metrics`: the registry in Prometheus' text format.
 * - `/topology/…`: the live topology view when `topology` is given (dashboard/app.ts).
 * Anything else is 404; a method other than GET or HEAD is 405.
 *
 * @example
 * const res = await createOpsApp({ health, registry })(new Request('http://ops/readyz?verbose'));
 */
export function createOpsApp(options: OpsAppOptions): FetchHandler {
  const { health, registry } = options;
  const logger = options.logger ?? silentLogger;

  async function healthEndpoint(endpoint: string, kind: HealthKind, url: URL): Promise<Response> {
    const excluded = new Set(url.searchParams.getAll('exclude'));
    const report = await health.run(kind, { exclude: [...excluded] });
    if (!report.ok) {
      const failed = report.checks.filter((c) => !c.ok).map((c) => ({ name: c.name, reason: c.reason }));
      logger.debug({ endpoint, failed }, 'health check failed');
    }
    // kube-apiserver lists the checks whenever one fails, whether or not `verbose` was asked for.
    if (report.ok && !url.searchParams.has('verbose')) return text(200, 'ok');
    return text(report.ok ? 200 : 500, verboseBody(endpoint, health.names(kind), report, excluded));
  }

  async function singleCheck(kind: HealthKind, name: string): Promise<Response> {
    if (!health.names(kind).includes(name)) return notFound();
    const report = await health.run(kind, { only: name });
    const check = report.checks[0];
    return report.ok ? text(200, 'ok') : text(500, `internal server error: ${check?.reason ?? 'failed'}\n`);
  }

  async function metrics(): Promise<Response> {
    try {
      return new Response(await registry.metrics(), { status: 200, headers: { 'content-type': registry.contentType } });
    } catch (err) {
      // A collector that throws (a callback gauge) must not take the endpoint down silently.
      logger.error({ err: errorMessage(err) }, 'collecting metrics failed');
      return text(500, `An error has occurred while serving metrics:\n\n${errorMessage(err)}\n`);
    }
  }

  return async (request) => {
    const url = new URL(request.url);
    if (options.topology && (url.pathname === TOPOLOGY_PATH || url.pathname.startsWith(`${TOPOLOGY_PATH}/`)))
      return options.topology(request);
    const [, first = '', second, ...rest] = url.pathname.split('/');
    const kind = Object.hasOwn(endpoints, first) ? endpoints[first] : undefined;
    // Exact paths only, as Go's ServeMux matches them: `/metrics/` and `/healthz/` are 404.
    const known = first === 'metrics' ? second === undefined : kind !== undefined && rest.length === 0 && second !== '';
    if (!known) return notFound();
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return text(405, 'Method Not Allowed\n', { allow: 'GET, HEAD' });
    if (kind === undefined) return metrics();
    if (second === undefined) return healthEndpoint(first, kind, url);
    // Check names are [a-z0-9-], so a name needing escapes (or a malformed one) names no check.
    return /^[a-z0-9-]+$/.test(second) ? singleCheck(kind, second) : notFound();
  };
}

/**
 * Serves {@link createOpsApp} on `host:port` (loopback by default; port 0 picks a free one), as `raven run` does for
 * its probes and Prometheus.
 */
export async function listenOps(options: ListenOpsOptions): Promise<RunningHttpServer> {
  const logger = options.logger ?? silentLogger;
  const host = options.host ?? '127.0.0.1';
  const server = await listen(createOpsApp(options), { host, port: options.port, portFlag: '--ops-port', logger });
  const topology = options.topology ? ', /topology/' : '';
  logger.info({ url: server.url }, `ops server listening (/healthz, /livez, /readyz, /metrics${topology})`);
  return server;
}
