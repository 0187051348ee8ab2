/**
 * `raven plan` (the CLI, as a user runs it) shows every kind Raven manages — networks, subnets, router interfaces,
 * ports and their VIFs, load balancers, listeners, pools, members, floating IPs, and the garbage collector's orphans —
 * honours `translations.*`, and says "nothing to do" once Raven has converged. Changes are made while Raven is
 * stopped, then planned, then made by Raven.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import type { KubeObject } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { ensureDevExternalNetwork } from '@raven/dev';
import { parseVif, VIF_ANNOTATION } from '../../../src/reconcilers/index.ts';
import {
  endpointSlice,
  podBody,
  ravenPlan,
  ravenSettings,
  startEnv,
  startRavenInProcess,
  untilNothingToDo,
  type Env,
} from './support.ts';

const CLUSTER = 'plan';

describe('raven plan', { timeout: 180_000 }, () => {
  let env: Env;
  let externalNetworkId: string;

  before(async () => {
    env = await startEnv(15_015);
    externalNetworkId = await ensureDevExternalNetwork(env.neutron);
  });
  after(async () => {
    await env.stop();
  });

  // Without warm pools (plan-daemon.test.ts plans them): a new pod gets a new port, a gone one's is deleted.
  const settings = (): Record<string, string> => ({
    ...ravenSettings(CLUSTER, 'namespace'),
    RAVEN_EXTERNAL_NETWORK_ID: externalNetworkId,
    RAVEN_PORT_POOLS: 'false',
  });

  const plan = (more: Record<string, string> = {}): Promise<string[]> =>
    ravenPlan(env, { ...settings(), ...more, RAVEN_GC_GRACE_SECONDS: '0' }, 30_000);

  /** Raven until `stop()`, with the test's settings. */
  const startRaven = () =>
    startRavenInProcess(env, settings(), {
      gc: { intervalSeconds: 1, graceSeconds: 0 },
      loadBalancer: { pendingRequeueMs: 100 },
    });

  const converged = () => untilNothingToDo(() => plan(), CLUSTER);

  const service = (ns: string, name: string, spec: Record<string, unknown>): KubeObject => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: ns },
    spec: { selector: { app: name }, ports: [{ name: 'http', port: 80, targetPort: 'http' }], ...spec },
  });

  it('plans every kind, changes nothing, and has nothing left once Raven ran', async () => {
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
    await env.client.create(resources.pods, podBody('shop', 'old'), { namespace: 'shop' });
    // Without a selector, its hand-written slice may name addresses outside the cluster (TEST-NET-1).
    await env.client.create(resources.services, service('shop', 'web', { type: 'LoadBalancer', selector: undefined }), {
      namespace: 'shop',
    });
    await env.client.create(resources.endpointslices, endpointSlice('shop', 'web', ['192.0.2.50']), {
      namespace: 'shop',
    });
    await env.client.create(resources.services, service('shop', 'api', { externalIPs: ['203.0.113.98'] }), {
      namespace: 'shop',
    });
    let raven = startRaven();
    await converged();
    await raven.stop();

    // While Raven is down: a namespace, a pod, a pod gone, a port added, the endpoints changed, an external IP moved.
    const old = await env.client.get(resources.pods, 'old', 'shop');
    const oldPort = parseVif(old.metadata.annotations?.[VIF_ANNOTATION])!.portId;
    await env.client.delete(resources.pods, 'old', 'shop');
    await env.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'lab' } });
    await env.client.create(resources.pods, podBody('shop', 'new'), { namespace: 'shop' });
    const web = await env.client.get(resources.services, 'web', 'shop');
    await env.client.update(resources.services, {
      ...web,
      spec: {
        ...web.spec,
        ports: [...(web.spec?.ports ?? []), { name: 'https', port: 443, targetPort: 8443 }],
      },
    });
    const api = await env.client.get(resources.services, 'api', 'shop');
    await env.client.update(resources.services, { ...api, spec: { ...api.spec, externalIPs: ['203.0.113.99'] } });
    const s = await env.client.get(resources.endpointslices, 'web-x', 'shop');
    await env.client.update(resources.endpointslices, {
      ...s,
      ...endpointSlice('shop', 'web', ['192.0.2.50', '192.0.2.51']),
    });

    const portsBefore = (await env.neutron.ports.list({})).map((p) => p.id).sort();
    const lines = await plan();
    const has = (pattern: RegExp) =>
      assert.ok(
        lines.some((l) => pattern.test(l)),
        `no line matches ${pattern}:\n${lines.join('\n')}`,
      );
    has(/^\+ network raven\/plan\/lab \(namespace lab\)$/);
    has(/^\+ subnet raven\/plan\/lab 10\.\S+ on network raven\/plan\/lab$/);
    has(/^\+ interface of router raven\/plan\/router on subnet raven\/plan\/lab$/);
    has(/^~ annotation raven\.openstack\.org\/network on namespace lab$/);
    has(/^\+ port raven\/plan\/shop\/new \(pod shop\/new\) on subnet /);
    has(/^~ annotation raven\.openstack\.org\/vif on pod shop\/new$/);
    has(/^\+ listener TCP:443 of load balancer raven\/plan\/shop\/web/);
    has(/^~ members of pool raven\/plan\/shop\/web\/http: 192\.0\.2\.5[01]:8080, 192\.0\.2\.5[01]:8080$/);
    has(/^\+ floating IP 203\.0\.113\.99 for service shop\/api$/);
    // Let go of, as the daemon does below: held for the Service's name through the quarantine, not deleted.
    has(/^~ floating IP 203\.0\.113\.98 of service shop\/api held for its name for 3600 s, then deleted$/);
    has(new RegExp(`^- port raven/plan/shop/old \\(pod ${old.metadata.uid} is gone\\) on subnet `));
    assert.equal(lines[0], `cluster ${CLUSTER}: ${lines.length - 1} change(s)`);
    assert.deepEqual((await env.neutron.ports.list({})).map((p) => p.id).sort(), portsBefore, 'plan changed something');

    // What is turned off is neither planned nor looked at.
    const podsOff = await plan({ RAVEN_TRANSLATE_PODS: 'false' });
    assert.ok(!podsOff.some((l) => l.includes('+ port')), podsOff.join('\n'));
    const servicesOff = await plan({ RAVEN_TRANSLATE_SERVICES: 'false' });
    assert.ok(!servicesOff.some((l) => /listener|members|floating IP/.test(l)), servicesOff.join('\n'));

    raven = startRaven();
    await converged();
    await raven.stop();
    assert.equal((await env.neutron.ports.list({ id: oldPort })).length, 0);
    const [held] = await env.neutron.floatingIps.list({ floating_ip_address: '203.0.113.98' });
    assert.ok(held && held.port_id === null && held.tags.includes('raven.kind=held'), JSON.stringify(held));
  });
});
