import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { waitFor } from '../../../test/support/wait.ts';
import type { KubeObject } from '../../kube/api/index.ts';
import { resources } from '../../kube/client/index.ts';
import { eventReasons, service, startSimHarness, type Harness } from '../../../test/support/service-harness.ts';
import { ANNOTATIONS } from './options.ts';

const blue = 'blue';
const red = 'red';

/**
 * Two tenants' namespaces on one cluster (embedded API server + OpenStack simulator, real Controller): what one
 * writes on its Services must not freeze the controller, nor take the other's addresses or pods.
 */
describe(
  'ServiceReconciler between tenants: no freeze, no address takeover, no member hijack',
  { timeout: 120_000 },
  () => {
    let h: Harness;

    before(async () => {
      h = await startSimHarness({
        auth: 'noauth',
        provisioningDelayMs: 20,
        clusterId: 'tenants',
        externalCidr: '172.24.8.0/24',
      });
      for (const name of [blue, red])
        await h.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    });
    after(async () => {
      await h?.stop();
    });

    const get = (namespace: string, name: string) => h.client.get(resources.services, name, namespace);
    const ingressOf = (svc: KubeObject) =>
      ((svc.status as { loadBalancer?: { ingress?: { ip?: string }[] } } | undefined)?.loadBalancer?.ingress ?? []).map(
        (i) => i.ip,
      );

    it('a floating-subnet glob that a RegExp would backtrack on for ever is refused quickly, and the other tenant is served', async () => {
      // A subnet of the floating network whose name nearly matches: the worst case for a backtracking matcher.
      await h.neutron.subnets.create({
        network_id: h.externalNetworkId,
        cidr: '172.24.9.0/24',
        ip_version: 4,
        name: 'a'.repeat(200),
      });
      const glob = `${'*a'.repeat(20)}*b`;
      await h.client.create(
        resources.services,
        {
          ...service(red, 'frozen', { type: 'LoadBalancer' }),
          metadata: { name: 'frozen', namespace: red, annotations: { [ANNOTATIONS.floatingSubnet]: glob } },
        },
        { namespace: red },
      );
      await waitFor('frozen: FloatingSubnetNotFound', async () =>
        (await eventReasons(h.client, red, 'frozen')).includes('FloatingSubnetNotFound'),
      );
      await h.client.create(resources.services, service(blue, 'web', { type: 'LoadBalancer' }), { namespace: blue });
      await waitFor('blue/web has its ingress', async () => ingressOf(await get(blue, 'web')).length === 1, {
        timeoutMs: 20_000,
      });
      const frozen = await get(red, 'frozen');
      const fips = await h.neutron.floatingIps.list({ description: `raven/tenants/${red}/frozen` });
      assert.deepEqual(fips, [], 'no floating IP from a subnet nobody asked for');
      assert.ok(
        ingressOf(frozen).every((ip) => ip === frozen.spec!.clusterIP),
        'only its VIP, inside the cloud',
      );
    });
  },
);
