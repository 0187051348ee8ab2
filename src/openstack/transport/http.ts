import { HttpClient } from '../../core/http-client.ts';
import { errorMessage } from '../../core/index.ts';
import { OpenStackError, type ServiceType } from '../errors.ts';

/**
 * Which requests a service's concurrency limit serves first: `critical` — on a pod's path to its network (a pool
 * port's claim, a cold-path create); `normal` — everything else, by default; `background` — Raven's own upkeep that
 * no pod waits for (pool refills and trims, garbage collection).
 */
export type RequestPriority = 'critical' | 'normal' | 'background';

/** A request on its way through the interceptors. `url` is set by the auth interceptor (endpoint + path + query). */
export interface PreparedRequest {
  service: ServiceType;
  method: string;
  /** Below the service endpoint, e.g. `/v2.0/ports`; for messages and the endpoint join. */
  path: string;
  query: URLSearchParams;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal | undefined;
  timeoutMs: number;
  /** Whether sending it twice is harmless: decides retries of 5xx/429 and of connection errors. */
  idempotent: boolean;
  /** Its place in the service's concurrency limit; absent: `normal`. */
  priority?: RequestPriority | undefined;
  url?: string;
  /** Set by the retry interceptor: 1 for the first attempt, then 2, 3 … (for observers; absent means 1). */
  attempt?: number;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  text: string;
}

/** One interceptor: wraps the next handler (undici's dispatcher-compose idea, at the level of whole requests). */
export type Handler = (req: PreparedRequest) => Promise<RawResponse>;
export type Interceptor = (next: Handler) => Handler;

/** `compose(a, b, c)(send)` runs a → b → c → send. */
export function compose(...interceptors: Interceptor[]): (terminal: Handler) => Handler {
  return (terminal) => interceptors.reduceRight<Handler>((next, interceptor) => interceptor(next), terminal);
}

export interface HttpOptions {
  ca?: string | undefined;
  insecure?: boolean | undefined;
  /** Idle keep-alive sockets are closed after this long. Default 30 s. */
  keepAliveTimeoutMs?: number;
}

/**
 * The terminal handler: one keep-alive HTTP client for every service. Connection failures and timeouts become an
 * {@link OpenStackError} with status 0 (`OPENSTACK_UNREACHABLE` / `OPENSTACK_TIMEOUT`); HTTP errors are returned as
 * responses for the interceptors above to judge.
 */
export class HttpSender {
  readonly #client: HttpClient;

  constructor(options: HttpOptions = {}) {
    this.#client = new HttpClient({
      keepAliveTimeoutMs: options.keepAliveTimeoutMs,
      tls: { ca: options.ca, rejectUnauthorized: !options.insecure },
    });
  }

  readonly send: Handler = async (req) => {
    if (!req.url) throw new Error(`no URL resolved for ${req.service} ${req.method} ${req.path}`);
    // A deadline cleared when the call ends: AbortSignal.timeout's timer, and the signal with it, would stay until it
    // fired, `timeoutMs` later — thousands of them held after a burst of pods.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), req.timeoutMs);
    const signal = req.signal ? AbortSignal.any([req.signal, timeout.signal]) : timeout.signal;
    try {
      const res = await this.#client.request({
        url: new URL(req.url),
        method: req.method,
        headers: req.headers,
        body: req.body,
        signal,
        // The whole-request deadline above is the only one: no idle timeout besides it.
        idleTimeoutMs: 0,
      });
      const text = await res.body.text();
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers))
        if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
      return { status: res.statusCode, headers, text };
    } catch (err) {
      const details = {
        service: req.service,
        method: req.method,
        path: req.path,
        status: 0,
        type: '',
        requestId: undefined,
      };
      if (req.signal?.aborted)
        throw req.signal.reason instanceof Error
          ? req.signal.reason
          : new OpenStackError(details, 'aborted', { cause: err, code: 'OPENSTACK_ABORTED' });
      if (timeout.signal.aborted)
        throw new OpenStackError(details, `no complete response within ${req.timeoutMs} ms`, {
          cause: err,
          code: 'OPENSTACK_TIMEOUT',
        });
      throw new OpenStackError(details, `connection failed: ${errorMessage(err)}${causeCode(err)}`, { cause: err });
    } finally {
      clearTimeout(timer);
    }
  };

  close(): Promise<void> {
    return this.#client.close();
  }
}

function causeCode(err: unknown): string {
  const code = (err as { cause?: { code?: unknown }; code?: unknown }).cause?.code ?? (err as { code?: unknown }).code;
  return typeof code === 'string' ? ` (${code})` : '';
}
