/**
 * `raven plan` with nested mode on and a pod on a VM node: the dry run answers the trunk calls (the trunk, the pod's
 * subport, its add to the trunk), so the plan gets quiet and prints them; nothing reaches the cloud.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { createVmNode, podBody, ravenPlan, ravenSettings, startEnv, type Env } from './support.ts';

const CLUSTER = 'plannested';
const NS = 'apps';

describe('raven plan, nested mode', { timeout: 120_000 }, () => {
  let env: Env;

  before(async () => {
    env = await startEnv(2_932);
    await createVmNode(env, 'vm-1', '192.168.50.0/24');
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    await env.client.create(resources.pods, podBody(NS, 'web', 'vm-1'), { namespace: NS });
  });
  after(async () => {
    await env.stop();
  });

  it('plans the VM node’s trunk, the pod’s port and its add to the trunk, and writes nothing', async () => {
    const settings = {
      ...ravenSettings(CLUSTER, 'shared'),
      RAVEN_NESTED_MODE: 'auto',
      RAVEN_TRANSLATE_NETWORK_POLICIES: 'false',
      RAVEN_PORT_POOLS: 'false',
    };
    const lines = await ravenPlan(env, settings, 60_000);
    const trunk = lines.find((l) => l === `+ trunk raven/${CLUSTER}/vm-1 (node vm-1)`);
    assert.ok(trunk, `no trunk planned:\n${lines.join('\n')}`);
    const port = lines.find((l) => /^\+ port .*\(pod apps\/web\)/.test(l));
    assert.ok(port, `no port planned for the pod:\n${lines.join('\n')}`);
    const add = lines.find((l) => l.startsWith('+ subport '));
    assert.ok(add, `no subport add planned:\n${lines.join('\n')}`);
    assert.equal(add, `+ subport raven/${CLUSTER}/apps/web (VLAN 1) of trunk raven/${CLUSTER}/vm-1`);
    assert.equal(env.sim.sim.neutron.trunks.size, 0, 'the plan made a trunk');
  });
});
