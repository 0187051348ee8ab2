import {
  defaultRetry,
  ravenUserAgent,
  realClock,
  silentLogger,
  type Clock,
  type Logger,
  type RetryOptions,
} from '../core/index.ts';
import { authenticate, endpointFor } from './auth/catalog.ts';
import { KeystoneAuthenticator, noAuthenticator, type Authenticator } from './auth/keystone.ts';
import { describeCloud, type CloudConfig } from './config/types.ts';
import { OpenStackError, parseErrorBody, type ServiceType } from './errors.ts';
import {
  compose,
  HttpSender,
  type Handler,
  type Interceptor,
  type PreparedRequest,
  type RequestPriority,
} from './transport/http.ts';
import { concurrency, logging, requestIdOf, retry } from './transport/interceptors.ts';
import { observed, type RequestObserver } from './transport/observe.ts';

export type QueryValue = string | number | boolean | readonly (string | number)[];

export interface OpenStackRequest {
  service: ServiceType;
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Below the service endpoint, starting with the version: `/v2.0/ports`, `/v2/lbaas/loadbalancers`. */
  path: string;
  /** Arrays repeat the key (`fields=id&fields=name`), as Neutron expects. */
  query?: Record<string, QueryValue | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  /** Whole-request deadline. Default: the session's (60 s); a 100-port bulk create on a small Neutron needs more. */
  timeoutMs?: number;
  /** Overrides the method's default (GET/HEAD/PUT/DELETE idempotent, POST/PATCH not) for the retry rules. */
  idempotent?: boolean;
  /** Its place in the service's concurrency limit (see {@link RequestPriority}); default `normal`. */
  priority?: RequestPriority | undefined;
}

export interface OpenStackResponse<T> {
  status: number;
  headers: Record<string, string>;
  /** Parsed JSON, or undefined for an empty body. */
  body: T;
  requestId: string | undefined;
}

export interface SessionOptions {
  cloud: CloudConfig;
  clock?: Clock;
  logger?: Logger;
  retry?: RetryOptions;
  /** Requests in flight per service. Default 8 each. */
  concurrency?: Partial<Record<ServiceType, number>>;
  timeoutMs?: number;
  userAgent?: string;
  /** Extra interceptors, outermost first (tests). */
  interceptors?: Interceptor[];
  /** Told of every HTTP exchange (each retry too); more can be added with {@link OpenStackSession.observe}. */
  onRequest?: RequestObserver;
}

const idempotentMethods = new Set(['GET', 'HEAD', 'PUT', 'DELETE']);

/**
 * Everything a typed client needs to call OpenStack for one cloud: authentication (Keystone or none), endpoint
 * selection, and one keep-alive transport whose interceptors log each call (with its request id, never a secret),
 * retry what is safe to retry, cap concurrency per service, and re-authenticate once on a 401. Non-2xx answers become
 * {@link OpenStackError}s.
 *
 * @example
 * const session = new OpenStackSession({ cloud: loadCloudConfig(), logger });
 * const { body } = await session.request<{ ports: Port[] }>({
 *   service: 'network', method: 'GET', path: '/v2.0/ports', query: { device_id: uid }, signal,
 * });
 */
export class OpenStackSession {
  readonly cloud: CloudConfig;
  readonly authenticator: Authenticator;
  readonly #http: HttpSender;
  readonly #handler: Handler;
  readonly #timeoutMs: number;
  readonly #userAgent: string;
  readonly #observers = new Set<RequestObserver>();

  constructor(options: SessionOptions) {
    const clock = options.clock ?? realClock;
    const logger = (options.logger ?? silentLogger).child({ cloud: options.cloud.name });
    this.cloud = options.cloud;
    this.#timeoutMs = options.timeoutMs ?? 60_000;
    this.#userAgent = options.userAgent ?? ravenUserAgent;
    this.#http = new HttpSender({ ca: options.cloud.ca, insecure: options.cloud.insecure });
    if (options.onRequest) this.#observers.add(options.onRequest);
    // Observed at the wire, below retry and auth: every attempt, re-authentication and token request is one sample.
    const send = observed(this.#http.send, () => this.#observers, clock);
    const limits = { identity: 4, network: 8, 'load-balancer': 8, ...options.concurrency };
    const common = compose(
      ...(options.interceptors ?? []),
      logging(logger, clock),
      retry({ ...defaultRetry, ...options.retry }, clock, logger),
      concurrency(limits),
    );
    const auth = options.cloud.auth;
    this.authenticator =
      auth.type === 'none' ? noAuthenticator : new KeystoneAuthenticator({ auth, send: common(send), clock, logger });
    this.#handler = common(authenticate(options.cloud, this.authenticator)(send));
    logger.debug({ cloud: describeCloud(options.cloud) }, 'openstack session');
  }

  /**
   * Reports every HTTP exchange from now on to `observer` (metrics: service, method, route template, status,
   * duration, attempt — never an id, query value or secret); returns the function that stops it.
   *
   * @example
   * const stop = session.observe((s) =>
   *   requests.inc({ service: s.service, operation: s.operation, code: String(s.status) }),
   * );
   */
  observe(observer: RequestObserver): () => void {
    this.#observers.add(observer);
    return () => this.#observers.delete(observer);
  }

  /** The base URL of `service` (authenticating first when the catalog is needed). */
  async endpoint(service: ServiceType, signal?: AbortSignal): Promise<string> {
    return endpointFor(this.cloud, service, await this.authenticator.session(signal));
  }

  /** Sends one request; resolves with the parsed body on 2xx, rejects with an {@link OpenStackError} otherwise. */
  async request<T = unknown>(req: OpenStackRequest): Promise<OpenStackResponse<T>> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(req.query ?? {})) {
      if (value === undefined) continue;
      if (Array.isArray(value)) for (const v of value as readonly (string | number)[]) query.append(key, String(v));
      else query.append(key, String(value));
    }
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': this.#userAgent,
      ...req.headers,
    };
    if (req.body !== undefined) headers['content-type'] = 'application/json';
    const prepared: PreparedRequest = {
      service: req.service,
      method: req.method,
      path: req.path,
      query,
      headers,
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      signal: req.signal,
      timeoutMs: req.timeoutMs ?? this.#timeoutMs,
      idempotent: req.idempotent ?? idempotentMethods.has(req.method),
      priority: req.priority,
    };
    const res = await this.#handler(prepared);
    const requestId = requestIdOf(res);
    if (res.status < 200 || res.status > 299) {
      const { type, message } = parseErrorBody(res.text);
      throw new OpenStackError(
        { service: req.service, method: req.method, path: req.path, status: res.status, type, requestId },
        message || `HTTP ${res.status}`,
      );
    }
    let body: unknown;
    if (res.text.trim() !== '') {
      try {
        body = JSON.parse(res.text);
      } catch (err) {
        throw new OpenStackError(
          { service: req.service, method: req.method, path: req.path, status: res.status, type: '', requestId },
          `answer is not JSON: ${res.text.slice(0, 200)}`,
          { cause: err, code: 'OPENSTACK_BAD_RESPONSE' },
        );
      }
    }
    return { status: res.status, headers: res.headers, body: body as T, requestId };
  }

  close(): Promise<void> {
    return this.#http.close();
  }
}
