/**
 * The HTTP/1.1 client both of Raven's clients (Kubernetes, OpenStack) send through: one keep-alive `node:http(s)`
 * agent, a request API that resolves with the status, headers and a streaming body, and an idle timeout between body
 * chunks. It replaced undici: undici parses HTTP with llhttp compiled to WebAssembly, and compiling that module cost
 * the controller 3–11 MB of resident memory at 1,000 pods (V8's WebAssembly compilers, its code space) for a parser
 * Node.js already has in C++ (docs/decisions.md §12). A proxy is reached through HTTP CONNECT with `https-proxy-agent`,
 * loaded only when one is configured. Not in core's index: only the clients import it.
 */
import {
  Agent as HttpAgent,
  request as httpRequest,
  type Agent,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

/** The TLS settings of every connection (the server's CA, a client certificate, the name to verify). */
export interface HttpTls {
  ca?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
  servername?: string | undefined;
  rejectUnauthorized?: boolean | undefined;
}

export interface HttpClientOptions {
  tls?: HttpTls;
  /** An `http://` proxy every connection is tunnelled through (HTTP CONNECT). */
  proxyUrl?: string | undefined;
  /** Idle keep-alive sockets are closed after this long. Default 30 s. */
  keepAliveTimeoutMs?: number;
}

export interface HttpRequest {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body?: string | undefined;
  signal?: AbortSignal | undefined;
  /** The longest silence allowed while waiting for the response or between body chunks; 0 = none. Default 300 s. */
  idleTimeoutMs?: number | undefined;
}

/** A response body: read whole with `text()`, or iterate its chunks (a watch); `destroy()` ends it early. */
export interface ResponseBody extends AsyncIterable<Uint8Array> {
  text(): Promise<string>;
  destroy(err?: Error): unknown;
}

export interface HttpResponse {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: ResponseBody;
}

/** The code of a socket that stayed silent past `idleTimeoutMs` (the request is destroyed with it). */
export const HTTP_IDLE_TIMEOUT = 'HTTP_IDLE_TIMEOUT';

const DEFAULT_IDLE_MS = 300_000;

function bodyOf(res: IncomingMessage): ResponseBody {
  return Object.assign(res, {
    async text(): Promise<string> {
      const chunks: Buffer[] = [];
      for await (const chunk of res) chunks.push(chunk as Buffer);
      return Buffer.concat(chunks).toString('utf8');
    },
  });
}

export class HttpClient {
  readonly #options: HttpClientOptions;
  /** The TLS settings every https request carries, without unset ones (made once, not per request). */
  readonly #tls: Partial<HttpTls>;
  /** One agent per scheme, made on first use (a proxy's on first use too, as it loads a module). */
  readonly #agents = new Map<string, Promise<Agent>>();
  /** Requests whose response body has not ended yet: `close()` waits for them. */
  readonly #inFlight = new Set<Promise<void>>();

  constructor(options: HttpClientOptions = {}) {
    this.#options = options;
    this.#tls = Object.fromEntries(Object.entries(options.tls ?? {}).filter(([, v]) => v !== undefined));
  }

  #agentFor(protocol: string): Promise<Agent> {
    let agent = this.#agents.get(protocol);
    if (!agent) {
      agent = this.#makeAgent(protocol);
      this.#agents.set(protocol, agent);
    }
    return agent;
  }

  async #makeAgent(protocol: string): Promise<Agent> {
    const { proxyUrl, keepAliveTimeoutMs = 30_000 } = this.#options;
    const keepAlive = { keepAlive: true, timeout: keepAliveTimeoutMs, scheduling: 'lifo' as const };
    if (proxyUrl) {
      const { HttpsProxyAgent } = await import('https-proxy-agent');
      return new HttpsProxyAgent(proxyUrl, keepAlive);
    }
    return protocol === 'https:' ? new HttpsAgent(keepAlive) : new HttpAgent(keepAlive);
  }

  /**
   * Sends a request; resolves when the response's headers arrive, with a body the caller must read or destroy.
   * Rejects with the socket's error (its `code`: ECONNREFUSED, a TLS code, {@link HTTP_IDLE_TIMEOUT}), or with an
   * `AbortError` when `signal` aborts; an abort after the headers destroys the body, whose reader gets an error.
   */
  async request(req: HttpRequest): Promise<HttpResponse> {
    const agent = await this.#agentFor(req.url.protocol);
    const secure = req.url.protocol === 'https:';
    const send = secure ? httpsRequest : httpRequest;
    // TLS settings go on each request, where both the agent and a proxy's tunnel read them.
    const tls = secure ? this.#tls : {};
    const headers = { ...req.headers };
    if (req.body !== undefined) headers['content-length'] = String(Buffer.byteLength(req.body));
    let ended!: () => void;
    const done = new Promise<void>((resolve) => (ended = resolve));
    this.#inFlight.add(done);
    void done.then(() => this.#inFlight.delete(done));
    return new Promise<HttpResponse>((resolve, reject) => {
      const outgoing = send(req.url, { ...tls, method: req.method, headers, agent, signal: req.signal });
      let response: IncomingMessage | undefined;
      const idleMs = req.idleTimeoutMs ?? DEFAULT_IDLE_MS;
      if (idleMs > 0) {
        outgoing.setTimeout(idleMs, () => {
          const err = Object.assign(new Error(`no data from ${req.url.host} for ${idleMs} ms`), {
            code: HTTP_IDLE_TIMEOUT,
          });
          // The body's reader gets this error, not the generic one a destroyed request leaves on its response.
          response?.destroy(err);
          outgoing.destroy(err);
        });
      } else {
        // None: not even the agent's keep-alive timeout, which a reused socket would otherwise carry.
        outgoing.setTimeout(0);
      }
      outgoing.on('error', (err) => {
        ended();
        reject(err);
      });
      outgoing.on('close', ended);
      outgoing.on('response', (res) => {
        response = res;
        res.on('close', ended);
        // A body destroyed after its reader stopped (an abort, a reset) must not crash the process; whoever still
        // reads it — `text()`, a watch's iteration — gets the error from the stream itself.
        res.on('error', () => {});
        resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: bodyOf(res) });
      });
      outgoing.end(req.body);
    });
  }

  /**
   * Waits for the responses in flight to end, for `graceMs` at most, then closes every connection: a body nobody
   * reads or destroys (a watch left open, an error path that forgot it) must not make a shutdown wait for ever.
   */
  async close(graceMs = 5_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.#inFlight),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
    ]);
    clearTimeout(timer);
    const agents = await Promise.all(this.#agents.values());
    this.#agents.clear();
    for (const agent of agents) agent.destroy();
  }
}
