/**
 * The NetworkPolicy translation turned off after it was on: Raven (`composeRaven`) on the embedded API server and the
 * OpenStack simulator, first with the translation, then restarted without it. A pod isolated by a policy must not stay
 * isolated by groups nobody translates any more: the garbage collector moves the pod's port back to its project's
 * `default` group (no `securityGroups` configured), and then deletes Raven's groups.
 */
import assert from 'node:assert/strict';
import { describe, it } from '../../support/node-test.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import { parseVif, VIF_ANNOTATION } from '../../../src/reconcilers/index.ts';
import { waitFor } from '../../support/wait.ts';
import { composeInProcess, podBody, ravenSettings, startEnv } from './support.ts';

const CLUSTER = 'netpol-off';

describe('NetworkPolicy translation turned off', { timeout: 120_000 }, () => {
  it("a pod's port leaves Raven's groups for its project's default group, and the groups go", async () => {
    const env = await startEnv(16_180);
    const config = (policies: boolean) =>
      loadRavenConfig({
        env: {
          ...ravenSettings(CLUSTER, 'namespace'),
          RAVEN_PORT_POOLS: 'false',
          RAVEN_TRANSLATE_NETWORK_POLICIES: String(policies),
        },
        flags: { gc: { intervalSeconds: 1, graceSeconds: 0 } },
      });
    let raven = await composeInProcess(env, config(true));
    try {
      await env.client.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
      await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ns' } });
      await env.client.create(resources.pods, podBody('ns', 'p'), { namespace: 'ns' });
      await env.client.create(
        resources.networkpolicies,
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { name: 'deny', namespace: 'ns' },
          spec: { podSelector: {}, policyTypes: ['Ingress'] },
        },
        { namespace: 'ns' },
      );
      const portId = await waitFor('the pod wired', async () => {
        const pod = await env.client.get(resources.pods, 'p', 'ns');
        return parseVif(pod.metadata.annotations?.[VIF_ANNOTATION])?.portId;
      });
      const ravenGroups = async () =>
        new Set(
          (await env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`] }, { fields: ['id'] })).map(
            (g) => g.id,
          ),
        );
      // Isolated: the port carries the node's group, and no longer the open ingress group.
      await waitFor('the pod isolated by Raven groups', async () => {
        const [port, groups] = await Promise.all([env.neutron.ports.get(portId), ravenGroups()]);
        return port.security_groups.length === 2 && port.security_groups.every((id) => groups.has(id));
      });
      await raven.stop();

      raven = await composeInProcess(env, config(false));
      const port = await env.neutron.ports.get(portId);
      const [defaultGroup] = await env.neutron.securityGroups.list({ name: 'default', project_id: port.project_id });
      await waitFor(
        "the port in its project's default group, Raven's groups gone",
        async () => {
          const [now, groups] = await Promise.all([env.neutron.ports.get(portId), ravenGroups()]);
          return JSON.stringify(now.security_groups) === JSON.stringify([defaultGroup!.id]) && groups.size === 0;
        },
        { timeoutMs: 30_000 },
      );
      // The pod kept its port: only its groups changed.
      const vif = parseVif((await env.client.get(resources.pods, 'p', 'ns')).metadata.annotations?.[VIF_ANNOTATION]);
      assert.equal(vif?.portId, portId);
    } finally {
      await raven.stop();
      await env.stop();
    }
  });
});
