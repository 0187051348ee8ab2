import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from '../../test/support/node-test.ts';
import { HTTP_IDLE_TIMEOUT, HttpClient } from './http-client.ts';

describe('HttpClient: keep-alive requests over node:http', { timeout: 30_000 }, () => {
  let server: Server;
  let base: URL;
  const sockets = new Set<unknown>();
  /** The routes: `/echo` answers the method, body and a header; `/stream` writes a line, then waits. */
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    if (req.url === '/stream') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"line":1}\n');
      return; // never ends: the client must stop it
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () =>
      res
        .writeHead(req.url === '/missing' ? 404 : 200, { 'x-seen': req.headers['x-test'] ?? '' })
        .end(JSON.stringify({ method: req.method, body })),
    );
  };

  before(async () => {
    server = createServer(handler);
    server.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('sends the method, headers and body, returns the status and headers, and keeps one connection alive', async () => {
    const client = new HttpClient();
    try {
      sockets.clear();
      for (const method of ['POST', 'PUT', 'GET']) {
        const res = await client.request({
          url: new URL('/echo', base),
          method,
          headers: { 'x-test': 'yes', 'content-type': 'application/json' },
          body: method === 'GET' ? undefined : '{"ünï":"cödé"}',
        });
        assert.equal(res.statusCode, 200);
        assert.equal(res.headers['x-seen'], 'yes');
        assert.deepEqual(JSON.parse(await res.body.text()), {
          method,
          body: method === 'GET' ? '' : '{"ünï":"cödé"}',
        });
      }
      assert.equal(sockets.size, 1, 'three requests in a row share one connection');
      const missing = await client.request({ url: new URL('/missing', base), method: 'GET', headers: {} });
      assert.equal(missing.statusCode, 404, 'an HTTP error is a response, not a rejection');
      await missing.body.text();
    } finally {
      await client.close();
    }
  });

  it('streams a body chunk by chunk; an abort ends the iteration with an error', async () => {
    const client = new HttpClient();
    const ac = new AbortController();
    try {
      const res = await client.request({
        url: new URL('/stream', base),
        method: 'GET',
        headers: {},
        signal: ac.signal,
      });
      const chunks: string[] = [];
      await assert.rejects(
        (async () => {
          for await (const chunk of res.body) {
            chunks.push(Buffer.from(chunk).toString());
            ac.abort();
          }
        })(),
        /aborted/,
      );
      assert.deepEqual(chunks, ['{"line":1}\n']);
    } finally {
      await client.close();
    }
  });

  it('a silent response past idleTimeoutMs fails with HTTP_IDLE_TIMEOUT', async () => {
    const client = new HttpClient();
    try {
      const res = await client.request({
        url: new URL('/stream', base),
        method: 'GET',
        headers: {},
        idleTimeoutMs: 200,
      });
      await assert.rejects(
        (async () => {
          for await (const _ of res.body);
        })(),
        { code: HTTP_IDLE_TIMEOUT },
      );
    } finally {
      await client.close();
    }
  });

  it('a closed port rejects with ECONNREFUSED; close() waits for a response in flight', async () => {
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((resolve) => probe.close(resolve));
    const client = new HttpClient();
    await assert.rejects(client.request({ url: new URL(`http://127.0.0.1:${port}/`), method: 'GET', headers: {} }), {
      code: 'ECONNREFUSED',
    });
    const res = await client.request({ url: new URL('/echo', base), method: 'GET', headers: {} });
    let closed = false;
    const closing = client.close().then(() => (closed = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(closed, false, 'close() waits while a body is unread');
    assert.equal((JSON.parse(await res.body.text()) as { method: string }).method, 'GET');
    await closing;
  });

  it('close() waits for a body nobody reads only for its grace, then closes the connection under it', async () => {
    const client = new HttpClient();
    const res = await client.request({ url: new URL('/stream', base), method: 'GET', headers: {} });
    await client.close(200);
    await assert.rejects(res.body.text());
  });
});
