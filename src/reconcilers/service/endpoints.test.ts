import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { waitFor } from '../../../test/support/wait.ts';
import { resources } from '../../kube/client/index.ts';
import { provisioningState } from '../../openstack/index.ts';
import { endpoints, service, slice, startSimHarness, type Harness } from '../../../test/support/service-harness.ts';

const ns = 'legacy';

describe(
  'ServiceReconciler: core Endpoints where a Service has no EndpointSlice (embedded API server + OpenStack simulator)',
  { timeout: 60_000 },
  () => {
    let h: Harness;

    before(async () => {
      h = await startSimHarness({
        auth: 'keystone',
        provisioningDelayMs: 20,
        clusterId: 'eps',
        externalCidr: '172.24.7.0/24',
      });
      await h.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    });
    after(async () => {
      await h?.stop();
    });

    /**
     * The members (`address:port`, sorted) of the Service's one pool once its load balancer is ACTIVE and they equal
     * `want`.
     */
    const members = (name: string, want: string[]) =>
      waitFor(
        `${name}: ACTIVE with members ${want.join(', ')}`,
        async () => {
          const [lb] = await h.octavia.loadBalancers.list({ name: `raven/eps/${ns}/${name}` });
          if (!lb || provisioningState(lb).state !== 'ACTIVE') return undefined;
          const [listener] = (await h.octavia.listeners.list()).filter((l) =>
            l.loadbalancers.some((r) => r.id === lb.id),
          );
          if (!listener?.default_pool_id) return undefined;
          const got = (await h.octavia.members.list(listener.default_pool_id))
            .map((m) => `${m.address}:${m.protocol_port}`)
            .sort();
          return got.join() === want.join() ? lb : undefined;
        },
        { timeoutMs: 15_000 },
      );

    it('Endpoints only: an ACTIVE load balancer whose members are the ready addresses; changes follow; a slice takes precedence, and its removal falls back', async () => {
      await h.client.create(resources.services, service(ns, 'old', { type: 'LoadBalancer' }), { namespace: ns });
      await h.client.create(
        resources.endpoints,
        endpoints(ns, 'old', ['10.244.0.30', '10.244.0.31'], ['10.244.0.32']),
        { namespace: ns },
      );
      const lb = await members('old', ['10.244.0.30:8080', '10.244.0.31:8080']);
      await waitFor('an ingress IP', async () => {
        const svc = await h.client.get(resources.services, 'old', ns);
        return (
          ((svc.status as { loadBalancer?: { ingress?: unknown[] } } | undefined)?.loadBalancer?.ingress?.length ?? 0) >
          0
        );
      });

      // An Endpoints change alone reaches the Service: the not-ready address became ready.
      await h.client.update(resources.endpoints, endpoints(ns, 'old', ['10.244.0.30', '10.244.0.31', '10.244.0.32']), {
        namespace: ns,
      });
      await members('old', ['10.244.0.30:8080', '10.244.0.31:8080', '10.244.0.32:8080']);

      // A slice appears: it alone counts, and Endpoints changes are ignored while it exists.
      await h.client.create(
        resources.endpointslices,
        slice(ns, 'old', 'a', ['10.244.0.40'], [], [{ name: 'http', port: 9090, protocol: 'TCP' }]),
        { namespace: ns },
      );
      await members('old', ['10.244.0.40:9090']);
      await h.client.update(resources.endpoints, endpoints(ns, 'old', ['10.244.0.33']), { namespace: ns });

      // The slice goes: back to the Endpoints as they are now.
      await h.client.delete(resources.endpointslices, 'old-a', ns);
      const after = await members('old', ['10.244.0.33:8080']);
      assert.equal(after.id, lb.id, 'the same load balancer throughout');
    });
  },
);
