import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, it } from '../../test/support/node-test.ts';
import { RavenError } from '../core/index.ts';
import { listen, type RunningHttpServer } from './http-server.ts';
import { selfSignedCertificate } from '../../test/support/server.ts';

describe('listen', () => {
  it('close() ends a TLS connection that never finished its handshake at once', async () => {
    const tls = await selfSignedCertificate('127.0.0.1');
    const server = await listen(() => Promise.resolve(new Response('ok')), { host: '127.0.0.1', port: 0, tls });
    const accepted = new Promise<void>((resolve) => server.server.once('connection', () => resolve()));
    // A raw TCP connection that sends no ClientHello: the HTTP layer never sees it.
    const socket: Socket = connect(server.port, '127.0.0.1');
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    try {
      await accepted;
      let timer: NodeJS.Timeout | undefined;
      // Well short of the 30 s keep-alive timeout a forgotten connection would hold close() for.
      const outcome = await Promise.race([
        server.close().then(() => 'closed'),
        new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still open'), 15_000))),
      ]);
      clearTimeout(timer);
      assert.equal(outcome, 'closed');
      await closed;
      assert.equal(socket.destroyed, true);
    } finally {
      socket.destroy();
    }
  });

  describe('a refused request head', () => {
    const body = JSON.stringify({ kind: 'Status', code: 431 });
    const refusing = (refusedLingerMs: number) =>
      listen(() => Promise.resolve(new Response('ok')), {
        host: '127.0.0.1',
        port: 0,
        maxHeaderSize: 1024,
        headerOverflowBody: body,
        refusedLingerMs,
      });
    /** A half-open client, as one is while it writes a head the server has already refused. */
    const client = async (server: RunningHttpServer) => {
      const accepted = new Promise<Socket>((resolve) => server.server.once('connection', resolve));
      const socket = connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true });
      const errors: Error[] = [];
      socket.on('error', (err) => errors.push(err));
      let answer = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (answer += chunk));
      const answered = new Promise<void>((resolve) => socket.once('end', () => resolve()));
      const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
      socket.write(`GET /${'a'.repeat(2048)}`);
      return { socket, serverSide: await accepted, errors, answer: () => answer, answered, closed };
    };
    const assert431 = (answer: string) => {
      assert.match(answer, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
      assert.equal(answer.slice(answer.indexOf('\r\n\r\n') + 4), body);
    };

    it('gets one 431, and the connection stays open, dropping the rest of the head, until the client ends', async () => {
      // A linger far beyond the test, so only the client's end can close the connection.
      const server = await refusing(600_000);
      const c = await client(server);
      try {
        await c.answered;
        // Each later chunk raises the parse error again; the server must not close (or reset) on it.
        for (let i = 0; i < 8; i++) {
          c.socket.write(`x-filler-${i}: ${'b'.repeat(1024)}\r\n`);
          await new Promise((resolve) => setTimeout(resolve, 10));
        }
        assert.equal(c.serverSide.destroyed, false);
        c.socket.end('\r\n');
        await c.closed;
        assert431(c.answer());
        assert.deepEqual(c.errors, []);
      } finally {
        c.socket.destroy();
        await server.close();
      }
    });

    it('a client that neither ends nor sends is closed by the server after the linger', async () => {
      const server = await refusing(100);
      const c = await client(server);
      try {
        await c.answered;
        await new Promise<void>((resolve) => c.serverSide.once('close', () => resolve()));
        assert431(c.answer());
      } finally {
        c.socket.destroy();
        await server.close();
      }
    });
  });

  it('a taken port is ADDRESS_IN_USE, in one line naming the address and the flag that picks a free port', async () => {
    const app = () => Promise.resolve(new Response('ok'));
    const first = await listen(app, { host: '127.0.0.1', port: 0 });
    try {
      const err = await listen(app, { host: '127.0.0.1', port: first.port, portFlag: '--api-port' }).catch(
        (e: unknown) => e,
      );
      assert.ok(err instanceof RavenError);
      assert.equal(err.code, 'ADDRESS_IN_USE');
      assert.equal(
        err.message,
        `127.0.0.1:${first.port} is already in use (another raven, or another server, listens there): stop it, or use --api-port 0 for any free port`,
      );
      assert.equal((err.cause as NodeJS.ErrnoException).code, 'EADDRINUSE');
      // The first server still serves.
      assert.equal(await (await fetch(first.url)).text(), 'ok');
    } finally {
      await first.close();
    }
  });
});
