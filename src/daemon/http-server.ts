import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { errorMessage, RavenError, silentLogger, type Logger } from '../core/index.ts';

export type FetchHandler = (request: Request) => Promise<Response>;

export interface ListenOptions {
  host: string;
  port: number;
  /** PEM certificate and key: serve HTTPS. */
  tls?: { cert: string; key: string };
  logger?: Logger;
  /** The flag that sets `port` (`--api-port`), named in the error when the port is taken. */
  portFlag?: string;
  /** Largest request head (request line and headers) in bytes; Node's default (16 KiB) when absent. */
  maxHeaderSize?: number;
  /** The JSON body of the 431 a request head over `maxHeaderSize` gets (Node sends no body of its own). */
  headerOverflowBody?: string;
  /** How long a connection whose head was refused is kept once answered, unless the client ends it first (2 s). */
  refusedLingerMs?: number;
}

export interface RunningHttpServer {
  /** `http(s)://host:port`, with the port actually bound (port 0 picks a free one). */
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

const bodyless = new Set(['GET', 'HEAD']);

async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : Buffer.concat(chunks);
}

/**
 * Adapts a `fetch(Request) → Response` app to node:http. Response bodies are streamed with backpressure: the next
 * chunk is read from the app only when the socket has drained, so a slow client's backlog stays in the app, where the
 * watch hub bounds it. A client that disconnects cancels the body (ending its watch).
 */
export function nodeHandler(
  fetch: FetchHandler,
  logger: Logger = silentLogger,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void (async () => {
      const method = req.method ?? 'GET';
      const body = bodyless.has(method) ? undefined : await readBody(req);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value === undefined) continue;
        for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
      }
      const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
        method,
        headers,
        ...(body ? { body } : {}),
      });
      const response = await fetch(request);
      const outHeaders: Record<string, string> = {};
      response.headers.forEach((value, name) => (outHeaders[name] = value));
      res.writeHead(response.status, outHeaders);
      if (!response.body || method === 'HEAD') {
        res.end();
        return;
      }
      if (response.headers.has('content-length')) {
        res.end(Buffer.from(await response.arrayBuffer()));
        return;
      }
      await streamBody(response.body as ReadableStream<Uint8Array>, res);
    })().catch((err: unknown) => {
      logger.error({ err: errorMessage(err), method: req.method, url: req.url }, 'request handling failed');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end();
    });
  };
}

/** Streams a body (a watch) chunk by chunk, reading the next chunk only once the socket has drained. */
async function streamBody(body: ReadableStream<Uint8Array>, res: ServerResponse): Promise<void> {
  res.flushHeaders();
  const reader = body.getReader();
  // A client that goes away cancels the body, which ends its watch in the app.
  res.on('close', () => {
    if (!res.writableFinished) void reader.cancel().catch(() => undefined);
  });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) {
        // Both listeners go once either fires: a long watch waits for drain many times and must not pile them up.
        await new Promise<void>((resolve) => {
          const done = (): void => {
            res.off('drain', done);
            res.off('close', done);
            resolve();
          };
          res.once('drain', done);
          res.once('close', done);
        });
      }
      if (res.destroyed) return;
    }
    res.end();
  } catch {
    // The app ended the stream with an error (a watch cut by fault injection): cut the connection too.
    res.destroy();
  }
}

/** A taken port, said in one line that names the way out (the CLI prints it as it is, without a stack). */
function inUse(options: ListenOptions, cause: Error): RavenError {
  const where = `${options.host.includes(':') ? `[${options.host}]` : options.host}:${options.port}`;
  const flag = options.portFlag ?? 'the port option';
  return new RavenError(
    'ADDRESS_IN_USE',
    `${where} is already in use (another raven, or another server, listens there): stop it, or use ${flag} 0 for any free port`,
    { cause },
  );
}

const answered = new WeakSet<Socket>();

/**
 * Answers a connection whose request head was refused, once, then lingers before closing it. The client is often
 * still sending the head, and every further chunk raises the same parse error: destroying the socket then would drop
 * an answer not yet flushed, or reset the connection under the client before it read it (Go's server and Apache
 * linger for the same reason). The HTTP layer reads and drops what still arrives; the socket closes when the client
 * ends, or after `lingerMs`.
 */
function answerOnce(socket: Socket, response: string, lingerMs: number): void {
  if (answered.has(socket)) return;
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  answered.add(socket);
  socket.end(response);
  const linger = setTimeout(() => socket.destroy(), lingerMs).unref();
  socket.once('close', () => clearTimeout(linger));
}

/** Binds a fetch app to a host and port (HTTP, or HTTPS with `tls`); a taken port is an `ADDRESS_IN_USE` error. */
export async function listen(fetch: FetchHandler, options: ListenOptions): Promise<RunningHttpServer> {
  const handler = nodeHandler(fetch, options.logger);
  const limits = options.maxHeaderSize ? { maxHeaderSize: options.maxHeaderSize } : {};
  const server = options.tls
    ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key, ...limits }, handler)
    : createHttpServer(limits, handler);
  const overflowBody = options.headerOverflowBody;
  const lingerMs = options.refusedLingerMs ?? 2_000;
  if (overflowBody !== undefined) {
    // Node answers an oversized head with a bare 431 and no body; clients of an API expect a Status in it.
    server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      if (err.code === 'HPE_HEADER_OVERFLOW') {
        answerOnce(
          socket,
          'HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: application/json\r\n' +
            `Content-Length: ${Buffer.byteLength(overflowBody)}\r\nConnection: close\r\n\r\n${overflowBody}`,
          lingerMs,
        );
      } else if (err.code !== 'ECONNRESET') {
        answerOnce(socket, 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n', lingerMs);
      } else {
        socket.destroy();
      }
    });
  }
  // Watches are long-lived; the app ends them itself (timeoutSeconds), so no socket timeout here.
  server.requestTimeout = 0;
  // closeAllConnections() only reaches connections the HTTP layer has taken over; a TLS connection still in its
  // handshake would hold close() open until keepAliveTimeout. Every raw socket is tracked so close() ends them all.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    const failed = (err: NodeJS.ErrnoException): void => reject(err.code === 'EADDRINUSE' ? inUse(options, err) : err);
    server.once('error', failed);
    server.listen(options.port, options.host, () => {
      server.off('error', failed);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}
