import assert from 'node:assert/strict';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from '../../test/support/node-test.ts';
import { floodSocket, startCniNode, type CniNode } from '../../test/support/cni.ts';
import { MAX_CALL_BYTES, startNodeDaemon, type ForwardedAnswer } from './node-daemon.ts';
import { openNodeConnections } from './plugin.ts';
import { CniErrorCode, cniErrorSchema } from './spec/index.ts';

/**
 * Issue 26, row 12: `raven node`'s socket on a real node's connections (the embedded API server and the OpenStack
 * simulator). Its mode holds from the moment it exists, whatever the umask; a call is one line, and a line past the
 * cap (a 50 MB line made the daemon grow to 273 MB) is answered with a CNI error and the connection closed.
 */
describe('raven node: its socket', { timeout: 30_000 }, () => {
  let node: CniNode;
  let daemon: { stopped: Promise<void> } | undefined;
  const stop = new AbortController();
  let socketPath = '';
  /** The umask right after the daemon started listening (the test set 0 before). */
  let umaskAfter = -1;

  before(async () => {
    node = await startCniNode('node-daemon');
    socketPath = join(node.dir, 'raven-node.sock');
    const connections = await openNodeConnections({ kubeconfig: node.kubeconfig, cloudsYaml: node.cloudsYaml });
    // Under umask 000 a socket is made world-connectable (0777) unless the daemon sets its own umask around listen.
    const umask = process.umask(0);
    try {
      daemon = await startNodeDaemon({ socketPath, connections, log: () => undefined }, stop.signal);
    } finally {
      umaskAfter = process.umask(umask);
    }
  });
  after(async () => {
    stop.abort();
    await daemon?.stopped;
    await node?.close();
  });

  it('is only its owner’s (0600), made so under umask 000, and the umask is left as it was', async () => {
    assert.equal((await stat(socketPath)).mode & 0o777, 0o600);
    assert.equal(umaskAfter, 0, 'the umask is restored');
  });

  it('answers a line past the cap with a CNI error and closes the connection, without reading the rest', async () => {
    const { answer, sent } = await floodSocket(socketPath, 50 * 1024 * 1024);
    const reply = JSON.parse(answer.trim()) as ForwardedAnswer;
    assert.equal(reply.exitCode, 1);
    const error = cniErrorSchema.parse(JSON.parse(reply.stdout));
    assert.equal(error.code, CniErrorCode.DECODING_FAILURE);
    assert.equal(error.msg, `the forwarded call is longer than ${MAX_CALL_BYTES} bytes`);
    assert.ok(sent < 50 * 1024 * 1024, 'the daemon closed before the whole line was sent');
  });
});
