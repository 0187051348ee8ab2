import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { RavenError } from '../core/index.ts';
import { listen } from './http-server.ts';
import { selfSignedCertificate } from './tls.ts';

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
      const started = Date.now();
      let timer: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        server.close().then(() => 'closed'),
        new Promise<string>((resolve) => (timer = setTimeout(() => resolve('still open'), 5_000))),
      ]);
      clearTimeout(timer);
      assert.equal(outcome, 'closed');
      assert.ok(Date.now() - started < 2_000);
      await closed;
      assert.equal(socket.destroyed, true);
    } finally {
      socket.destroy();
    }
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
