import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { resources, type KubeClient } from '../../../src/kube/client/index.ts';
import { startTestServer, type TestServer } from '../../../test/support/server.ts';
import { waitFor } from '../../../test/support/wait.ts';
import {
  runSimulator,
  vif,
  vifAnnotation as vifKey,
  type RunningSimulator,
} from '../../../test/support/cluster-sim.ts';
import type { EndpointSlice, Pod, Service } from '../../../src/kube/api/index.ts';

/** The server's pod deletion mode is the parameter: immediate (default) or graceful (the kubelet removes pods). */
for (const podGracefulDeletion of [false, true]) {
  describe(
    `EndpointSlice controller against the embedded API server (graceful pod deletion ${podGracefulDeletion ? 'on' : 'off'})`,
    { timeout: 120_000 },
    () => {
      let server: TestServer;
      let sim: RunningSimulator;
      let client: KubeClient;
      const ns = 'shop';

      before(async () => {
        server = await startTestServer({ podGracefulDeletion });
        sim = runSimulator(server, { deleteGraceMs: 1500 });
        client = sim.client;
        await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      });
      after(async () => {
        await sim.stop();
        await server.stop();
      });

      function createPod(name: string, app: string, ip?: string) {
        return client.create<Pod>(resources.pods, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name, namespace: ns, labels: { app }, ...(ip ? { annotations: { [vifKey]: vif(ip) } } : {}) },
          spec: { containers: [{ name: 'app', image: 'nginx', ports: [{ name: 'web', containerPort: 8080 }] }] },
        });
      }
      const createService = (name: string, selector?: Record<string, string>) =>
        client.create<Service>(resources.services, {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name, namespace: ns },
          spec: {
            ...(selector ? { selector } : {}),
            ports: [
              { name: 'http', port: 80, targetPort: 'web' },
              { name: 'metrics', port: 9090, targetPort: 9100, protocol: 'TCP' },
            ],
          },
        });
      const slicesOf = async (service: string) =>
        (
          await client.list<EndpointSlice>(resources.endpointslices, {
            namespace: ns,
            labelSelector: `kubernetes.io/service-name=${service}`,
          })
        ).items;
      /** The one slice of a service once its endpoints are `addresses` (with their ready flags). */
      const sliceWith = (service: string, expected: string[]) =>
        waitFor(
          `${service}'s slice to list ${expected.join(',') || 'nothing'}`,
          async () => {
            const slices = await slicesOf(service);
            const seen = slices.flatMap((s) =>
              (s.endpoints ?? []).map(
                (e) =>
                  `${e.addresses[0]}${e.conditions?.ready ? '' : e.conditions?.terminating ? '(terminating)' : '(unready)'}`,
              ),
            );
            return slices.length === 1 && JSON.stringify(seen) === JSON.stringify(expected) && slices[0]!;
          },
          { timeoutMs: 10_000 },
        );

      it('lists exactly the ready matching pods, with target ports resolved, owned by the service', async () => {
        const svc = await createService('web', { app: 'web' });
        await Promise.all([
          createPod('web-1', 'web', '10.0.1.11'),
          createPod('web-2', 'web', '10.0.1.12'),
          createPod('db', 'db', '10.0.1.20'),
          createPod('web-3', 'web'),
        ]);
        const slice = await sliceWith('web', ['10.0.1.11', '10.0.1.12']);
        assert.match(slice.metadata.name!, /^web-[a-z0-9]{5}$/);
        assert.equal(
          slice.metadata.labels?.['endpointslice.kubernetes.io/managed-by'],
          'endpointslice-controller.k8s.io',
        );
        assert.deepEqual(
          slice.metadata.ownerReferences?.map((o) => [o.kind, o.name, o.uid]),
          [['Service', 'web', svc.metadata.uid]],
        );
        assert.equal(slice.addressType, 'IPv4');
        assert.deepEqual(slice.ports, [
          { name: 'http', protocol: 'TCP', port: 8080 },
          { name: 'metrics', protocol: 'TCP', port: 9100 },
        ]);
        const endpoint = slice.endpoints!.find((e) => e.addresses[0] === '10.0.1.11')!;
        assert.deepEqual(endpoint.conditions, { ready: true, serving: true, terminating: false });
        assert.equal(endpoint.targetRef?.name, 'web-1');
        assert.ok(endpoint.nodeName?.startsWith('node-'));
      });

      it('follows pod changes: a pod getting its IP, a relabelled pod, a deleted pod', async () => {
        await client.patch(
          resources.pods,
          'web-3',
          ns,
          { metadata: { annotations: { [vifKey]: vif('10.0.1.13') } } },
          'merge',
        );
        await sliceWith('web', ['10.0.1.11', '10.0.1.12', '10.0.1.13']);
        await client.patch(resources.pods, 'web-1', ns, { metadata: { labels: { app: 'old' } } }, 'merge');
        await sliceWith('web', ['10.0.1.12', '10.0.1.13']);
        await client.delete(resources.pods, 'web-2', ns);
        if (podGracefulDeletion) await sliceWith('web', ['10.0.1.12(terminating)', '10.0.1.13']);
        await sliceWith('web', ['10.0.1.13']);
      });

      it('restores a slice deleted or edited by someone else', async () => {
        const [slice] = await slicesOf('web');
        await client.delete(resources.endpointslices, slice!.metadata.name!, ns);
        const again = await sliceWith('web', ['10.0.1.13']);
        assert.equal(again.metadata.name, slice!.metadata.name, 'the same stable name');
        assert.notEqual(again.metadata.uid, slice!.metadata.uid, 'not re-created');
        const edited = await client.patch<EndpointSlice>(
          resources.endpointslices,
          again.metadata.name!,
          ns,
          { endpoints: [] },
          'merge',
        );
        // The edit landed (the slice lists nothing), so listing the pod again below can only be the controller's
        // repair.
        assert.deepEqual(edited.endpoints ?? [], []);
        await sliceWith('web', ['10.0.1.13']);
      });

      it('leaves services without a selector alone, and deletes the slices of a deleted service', async () => {
        await createService('external');
        const mine = await createService('gone-soon', { app: 'web' });
        await sliceWith('gone-soon', ['10.0.1.13']);
        await client.delete(resources.services, 'gone-soon', ns);
        await waitFor('gone-soon slices deleted', async () => (await slicesOf('gone-soon')).length === 0);
        assert.deepEqual(await slicesOf('external'), []);
        assert.ok(mine.metadata.uid);
      });

      it('a service with no matching pods has one empty slice', async () => {
        await createService('lonely', { app: 'nobody' });
        const slice = await sliceWith('lonely', []);
        assert.deepEqual(slice.ports, []);
      });
    },
  );
}
