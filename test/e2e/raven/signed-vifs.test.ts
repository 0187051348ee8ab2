/**
 * Issue 28, signed VIFs and a crash between a pool port's VIF and its claim. With a VIF key, a node plugs a pod's port
 * on Raven's signature before the claim reaches Neutron; so when Raven dies in between, the port it signed must stay
 * that pod's after the restart, even though Neutron still shows it free — never handed to a pod that comes first in
 * the new leader's queue. Raven runs as a child process (SIGKILL); the simulator's Neutron refuses every port update
 * (the claim) until the kill.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from '../../support/node-test.ts';
import { parseVif, vifSignatureValid, VIF_ANNOTATION, type Pod } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  podBody,
  ravenSettings,
  killChild,
  startControllerChild,
  startEnv,
  waitForPort,
  type ControllerChild,
  type Env,
} from './support.ts';

const CLUSTER = 'signed';
const NS = 'sv';

describe('signed VIFs: a port signed before its claim survives a crash', { timeout: 120_000 }, () => {
  let env: Env;
  let child: ControllerChild | undefined;
  const key = randomBytes(32);
  let keyFile = '';

  before(async () => {
    env = await startEnv(2_828, {}, { linuxbridgeHosts: ['node-1'] });
    keyFile = join(env.server.dir, 'vif.key');
    await writeFile(keyFile, key, { mode: 0o600 });
    await env.client.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  });
  after(async () => {
    await killChild(child);
    await env.stop();
  });

  const start = () =>
    startControllerChild(env, {
      ...ravenSettings(CLUSTER, 'namespace'),
      RAVEN_TRANSLATE_NETWORK_POLICIES: 'false',
      RAVEN_PORT_POOL_SIZING: 'static',
      RAVEN_PORT_POOL_MIN: '1',
      RAVEN_PORT_POOL_MAX: '2',
      RAVEN_PORT_POOL_BATCH: '1',
      RAVEN_VIF_KEY_FILE: keyFile,
    });
  const vifOf = async (name: string) =>
    parseVif((await env.client.get<Pod>(resources.pods, name, NS)).metadata.annotations?.[VIF_ANNOTATION]);

  it('keeps the signed port for its pod; a pod first in the new leader’s queue gets another', async () => {
    // A pool port for node-1 first (a warm-up pod, then gone), so the next pod takes one and only claims it.
    child = start();
    await env.client.create(resources.pods, podBody(NS, 'warm-up', 'node-1'), { namespace: NS });
    await waitForPort(env.client, NS, 'warm-up', 30_000);
    await env.client.delete(resources.pods, 'warm-up', NS);
    await waitFor(
      'a free pool port on node-1',
      () =>
        [...env.sim.sim.neutron.ports.values()].some(
          (p) => p.host_id === 'node-1' && p.device_owner === 'compute:raven' && p.tags.length > 0 && !p.device_id,
        ) || undefined,
    ).catch(() => undefined); // a recycled port keeps the dead pod's device_id: either way the pool has one

    // Every claim (a port update) fails: the VIF is written and signed, the claim never lands.
    env.sim.sim.faults.addRule({ method: 'PUT', path: '/network/v2.0/ports/{id}', status: 503 });
    await env.client.create(resources.pods, podBody(NS, 'z-first', 'node-1'), { namespace: NS });
    const first = await waitFor('z-first signed', async () => {
      const vif = await vifOf('z-first');
      return vif && vifSignatureValid(vif, key) ? vif : undefined;
    });
    const port = env.sim.sim.neutron.ports.get(first.portId);
    assert.ok(port, 'the VIF names a port Neutron has');
    assert.notEqual(port.device_id, first.podUid, 'the claim has not landed');
    child.proc.kill('SIGKILL');
    await child.exited;
    env.sim.sim.faults.clearRules();

    // A pod that sorts first in the next leader's queue, created while no Raven runs.
    await env.client.create(resources.pods, podBody(NS, 'a-second', 'node-1'), { namespace: NS });
    child = start();
    const second = await waitForPort(env.client, NS, 'a-second', 30_000);
    await waitFor(
      'z-first claimed',
      () => env.sim.sim.neutron.ports.get(first.portId)?.device_id === first.podUid || undefined,
    );
    assert.notEqual(second, first.portId, 'a-second was given the port signed for z-first');
    const after = await vifOf('z-first');
    assert.equal(after?.portId, first.portId, 'z-first lost the port its node may have plugged');
    assert.equal(after?.signed?.hmac, first.signed?.hmac, 'its VIF is the one the dead leader signed');
  });
});
