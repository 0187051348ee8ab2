import { HttpClient, type HttpResponse } from '../../core/http-client.ts';
import { RavenError, realClock, silentLogger, type Clock, type Logger } from '../../core/index.ts';
import type { ClusterConnection, Credentials } from './connection.ts';
import { KubeStatusError, KubeTransportError, statusFromResponse } from './errors.ts';
import {
  defaultRetry,
  isRetryableError,
  isRetryableStatus,
  retrying,
  type AttemptOutcome,
  type AttemptReport,
  type RetryOptions,
  type RetryVerdict,
} from '../../core/index.ts';
import type { TokenBucket } from '../../core/index.ts';

/** One request to the API server; `path` is below the connection's server URL and carries its query string. */
export interface TransportRequest {
  method: string;
  path: string;
  body?: string | undefined;
  contentType?: string | undefined;
  signal?: AbortSignal | undefined;
  /** False for requests that must be sent once (watches: the caller re-watches). Default: the method's rules. */
  retry?: boolean;
  /** Idle time allowed for the response and between its body chunks; 0 = none. Default 300 s. */
  bodyTimeoutMs?: number;
}

export interface TransportOptions {
  connection: ClusterConnection;
  bucket: TokenBucket;
  userAgent: string;
  clock?: Clock | undefined;
  logger?: Logger | undefined;
  retry?: RetryOptions | undefined;
}

const MAX_CERT_AGENTS = 4;

/**
 * One attempt's result: a response (a 4xx/5xx with its body read, for the error), or the failure to get one. Both are
 * results, not throws, so that only they meet the retry rules: a failing token bucket or credential plugin is not.
 */
type Attempt = { res: HttpResponse; text?: string; ms: number } | { failure: unknown; ms: number };

/**
 * The one transport every request takes: a client-side token, fresh credentials, the connection's TLS/proxy settings,
 * bounded retries of what is safe to repeat, one debug line per attempt (never headers or bodies: they carry tokens),
 * and failures as typed errors. One keep-alive HTTP client is shared, except that each client certificate needs its
 * own (the certificate is part of the TLS handshake).
 */
export class Transport {
  readonly #connection: ClusterConnection;
  readonly #bucket: TokenBucket;
  readonly #userAgent: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  readonly #retry: Required<RetryOptions>;
  readonly #origin: string;
  readonly #prefix: string;
  readonly #clients = new Map<string, HttpClient>();

  constructor(options: TransportOptions) {
    this.#connection = options.connection;
    this.#bucket = options.bucket;
    this.#userAgent = options.userAgent;
    this.#clock = options.clock ?? realClock;
    this.#logger = options.logger ?? silentLogger;
    this.#retry = { ...defaultRetry, ...options.retry };
    const url = new URL(options.connection.server);
    this.#origin = url.origin;
    this.#prefix = url.pathname.replace(/\/+$/, '');
  }

  #clientFor(creds: Credentials): HttpClient {
    const key = creds.kind === 'client-certificate' ? `${creds.cert}\0${creds.key}` : '';
    let client = this.#clients.get(key);
    if (client) return client;
    const c = this.#connection;
    client = new HttpClient({
      tls: {
        ca: c.ca,
        servername: c.tlsServerName,
        rejectUnauthorized: !c.insecureSkipTlsVerify,
        ...(creds.kind === 'client-certificate' ? { cert: creds.cert, key: creds.key } : {}),
      },
      proxyUrl: c.proxyUrl,
    });
    if (key && this.#clients.size >= MAX_CERT_AGENTS) {
      // A rotated certificate: retire the oldest certificate's client once its requests finish.
      const oldest = [...this.#clients.keys()].find((k) => k !== '');
      if (oldest !== undefined) {
        this.#clients
          .get(oldest)
          ?.close()
          .catch(() => {});
        this.#clients.delete(oldest);
      }
    }
    this.#clients.set(key, client);
    return client;
  }

  #headers(req: TransportRequest, creds: Credentials): Record<string, string> {
    const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.#userAgent };
    if (req.contentType) headers['content-type'] = req.contentType;
    if (creds.kind === 'bearer') headers.authorization = `Bearer ${creds.token}`;
    else if (creds.kind === 'basic')
      headers.authorization = `Basic ${Buffer.from(`${creds.username}:${creds.password}`).toString('base64')}`;
    return headers;
  }

  /**
   * Sends a request; resolves with a 2xx response whose body the caller must consume or destroy. Rejects with a
   * {@link KubeStatusError} (4xx/5xx), a {@link KubeTransportError} (no response), or the signal's reason (aborted).
   */
  async send(req: TransportRequest): Promise<HttpResponse> {
    const { method, path, signal } = req;
    const result = await retrying(() => this.#attempt(req), {
      options: this.#retry,
      clock: this.#clock,
      signal,
      classify: (outcome) => this.#classify(req, outcome),
      onAttempt: (report) => this.#log(req, report),
    });
    if ('failure' in result) throw new KubeTransportError(method, path, result.failure, this.#connection.source);
    if (result.res.statusCode >= 400) {
      throw new KubeStatusError(statusFromResponse(result.res.statusCode, result.text ?? ''), method, path);
    }
    return result.res;
  }

  /** Takes a token, fetches fresh credentials and sends once. Rejects only with what must not be retried. */
  async #attempt(req: TransportRequest): Promise<Attempt> {
    const { signal } = req;
    await this.#bucket.take(signal);
    const creds: Credentials = (await this.#connection.credentials?.(signal)) ?? { kind: 'none' };
    const started = this.#clock.now();
    let res: HttpResponse;
    try {
      res = await this.#clientFor(creds).request({
        url: new URL(this.#prefix + req.path, this.#origin),
        method: req.method,
        headers: this.#headers(req, creds),
        body: req.body,
        signal,
        idleTimeoutMs: req.bodyTimeoutMs,
      });
    } catch (failure) {
      if (signal?.aborted) throw signal.reason;
      return { failure, ms: this.#clock.now() - started };
    }
    const ms = this.#clock.now() - started;
    if (res.statusCode < 400) return { res, ms };
    return { res, ms, text: await res.body.text().catch(() => '') };
  }

  /** The retry rules for this request; `retry: false` (watches) opts out of all of them. */
  #classify(req: TransportRequest, outcome: AttemptOutcome<Attempt>): RetryVerdict {
    if (!outcome.ok || req.retry === false) return { retry: false };
    const result = outcome.value;
    if ('failure' in result) return { retry: isRetryableError(req.method, result.failure) };
    if (result.res.statusCode < 400) return { retry: false };
    return {
      retry: isRetryableStatus(req.method, result.res.statusCode),
      retryAfter: result.res.headers['retry-after'],
    };
  }

  /** One debug line per attempt that got as far as the wire (never headers or bodies: they carry tokens). */
  #log({ method, path }: TransportRequest, { attempt, outcome, retry }: AttemptReport<Attempt>): void {
    if (!outcome.ok) return;
    const result = outcome.value;
    if ('failure' in result) {
      const error = (result.failure as Error).message;
      this.#logger.debug({ method, path, error, ms: result.ms, attempt, retry }, 'kube request failed');
    } else if (result.res.statusCode < 400) {
      this.#logger.debug({ method, path, status: result.res.statusCode, ms: result.ms }, 'kube request');
    } else {
      this.#logger.debug(
        { method, path, status: result.res.statusCode, ms: result.ms, attempt, retry },
        'kube request',
      );
    }
  }

  /** Sends a request and parses its JSON body (`undefined` for an empty one). */
  async json<T>(req: TransportRequest): Promise<T> {
    const res = await this.send(req);
    let text: string;
    try {
      text = await res.body.text();
    } catch (err) {
      if (req.signal?.aborted) throw req.signal.reason;
      throw new KubeTransportError(req.method, req.path, err, this.#connection.source);
    }
    try {
      return (text ? JSON.parse(text) : undefined) as T;
    } catch (err) {
      throw new RavenError(
        'KUBE_DECODE',
        `${req.method} ${req.path}: the response is not JSON: ${text.slice(0, 120)}`,
        { cause: err },
      );
    }
  }

  /** Closes every connection (waits for requests in flight). */
  async close(): Promise<void> {
    const all = [...this.#clients.values()];
    this.#clients.clear();
    await Promise.all(all.map((client) => client.close()));
  }
}
