import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { isNotFound, resources, type KubeClient, type ResourceRef } from '../../../src/kube/client/index.ts';
import { startTestServer, type TestServer } from '../../../test/support/server.ts';
import { waitFor } from '../../../test/support/wait.ts';
import { exitAfterAnnotation } from './index.ts';
import {
  runSimulator,
  vif,
  vifAnnotation as vifKey,
  type RunningSimulator,
} from '../../../test/support/cluster-sim.ts';
import type { Deployment, Namespace, Node, Pod } from '../../../src/kube/api/index.ts';

describe('ClusterSimulator against the embedded API server (graceful pod deletion on)', { timeout: 120_000 }, () => {
  let server: TestServer;
  let sim: RunningSimulator;
  let client: KubeClient;

  before(async () => {
    server = await startTestServer({ podGracefulDeletion: true });
    sim = runSimulator(server, {
      nodes: ['node-1', 'node-2', { name: 'node-3', labels: { disktype: 'ssd' } }],
      deleteGraceMs: 1500,
    });
    client = sim.client;
  });
  after(async () => {
    await sim.stop();
    await server.stop();
  });

  const namespace = (name: string, finalizers?: string[]) =>
    client.create<Namespace>(resources.namespaces, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, ...(finalizers ? { finalizers } : {}) },
    });
  const getPod = (ns: string, name: string) => client.get<Pod>(resources.pods, name, ns);
  function createPod(
    ns: string,
    name: string,
    spec: Record<string, unknown> = {},
    annotations?: Record<string, string>,
  ) {
    return client.create<Pod>(resources.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: ns, labels: { app: name }, ...(annotations ? { annotations } : {}) },
      spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...spec },
    });
  }
  const setVif = (ns: string, name: string, address: string) =>
    client.patch(resources.pods, name, ns, { metadata: { annotations: { [vifKey]: vif(address) } } }, 'merge');
  const ready = (pod: Pod) => pod.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  const gone = async (ref: ResourceRef, name: string, ns?: string) =>
    client.get(ref, name, ns).then(
      () => false,
      (err: unknown) => isNotFound(err),
    );

  it('registers the nodes: Ready, InternalIP 127.0.1.N, kubelet labels plus their own', async () => {
    const nodes = await waitFor('three nodes', async () => {
      const list = (await client.list<Node>(resources.nodes)).items;
      return (
        list.length === 3 &&
        list.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) &&
        list
      );
    });
    const byName = new Map(nodes.map((n) => [n.metadata.name, n]));
    assert.deepEqual(byName.get('node-2')?.status?.addresses, [
      { type: 'InternalIP', address: '127.0.1.2' },
      { type: 'Hostname', address: 'node-2' },
    ]);
    assert.equal(byName.get('node-1')?.metadata.labels?.['kubernetes.io/hostname'], 'node-1');
    assert.equal(byName.get('node-3')?.metadata.labels?.disktype, 'ssd');
    assert.equal(byName.get('node-1')?.metadata.labels?.disktype, undefined);
  });

  it('spreads a burst of pods over the nodes, fewest first', async () => {
    await namespace('spread');
    await Promise.all(
      Array.from({ length: 9 }, (_, i) => createPod('spread', `p${i}`, {}, { [vifKey]: vif(`10.0.0.${i + 10}`) })),
    );
    const pods = await waitFor('all nine bound', async () => {
      const items = (await client.list<Pod>(resources.pods, { namespace: 'spread' })).items;
      return items.every((p) => p.spec?.nodeName) && items;
    });
    const perNode = new Map<string, number>();
    for (const p of pods) perNode.set(p.spec!.nodeName!, (perNode.get(p.spec!.nodeName!) ?? 0) + 1);
    assert.deepEqual([...perNode.values()], [3, 3, 3]);
  });

  it('keeps a scheduled pod Pending without a VIF annotation, and runs it with the annotation IP once written', async () => {
    await namespace('vif');
    await createPod('vif', 'web');
    const bound = await waitFor('bound and reported', async () => {
      const p = await getPod('vif', 'web');
      return p.spec?.nodeName && p.status?.containerStatuses ? p : undefined;
    });
    assert.ok(bound.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.status === 'True'));
    await sleep(300);
    const waiting = await getPod('vif', 'web');
    assert.equal(waiting.status?.phase, 'Pending');
    assert.equal(waiting.status?.podIP, undefined);
    assert.equal(waiting.status?.conditions?.find((c) => c.type === 'Ready')?.reason, 'ContainersNotReady');
    assert.deepEqual(waiting.status?.containerStatuses?.[0]?.state, { waiting: { reason: 'ContainerCreating' } });

    await setVif('vif', 'web', '10.0.0.5');
    const running = await waitFor('Running', async () => {
      const p = await getPod('vif', 'web');
      return p.status?.phase === 'Running' && p;
    });
    const nodeIp = `127.0.1.${bound.spec!.nodeName!.slice(-1)}`;
    assert.equal(running.status?.podIP, '10.0.0.5');
    assert.deepEqual(running.status?.podIPs, [{ ip: '10.0.0.5' }]);
    assert.equal(running.status?.hostIP, nodeIp);
    assert.ok(running.status?.startTime);
    assert.ok(ready(running));
    assert.ok(running.status?.containerStatuses?.every((c) => c.ready && 'running' in c.state));
    // Written only on change: nothing new happens to a converged pod.
    await sleep(300);
    assert.equal((await getPod('vif', 'web')).metadata.resourceVersion, running.metadata.resourceVersion);
  });

  it("runs hostNetwork pods at once with the node's IP", async () => {
    await namespace('host');
    await createPod('host', 'agent', { hostNetwork: true });
    const pod = await waitFor('Running', async () => {
      const p = await getPod('host', 'agent');
      return p.status?.phase === 'Running' && p;
    });
    assert.equal(pod.status?.podIP, pod.status?.hostIP);
    assert.equal(pod.status?.podIP, `127.0.1.${pod.spec!.nodeName!.slice(-1)}`);
  });

  it('honours nodeSelector, and reports a pod no node fits with FailedScheduling until one does', async () => {
    await namespace('select');
    await createPod('select', 'ssd', { nodeSelector: { disktype: 'ssd' } });
    await createPod('select', 'nvme', { nodeSelector: { disktype: 'nvme' } });
    await waitFor('ssd pod on node-3', async () => (await getPod('select', 'ssd')).spec?.nodeName === 'node-3');
    const events = await waitFor('a FailedScheduling event', async () => {
      const items = (
        await client.list(resources.events, {
          namespace: 'select',
          fieldSelector: 'involvedObject.name=nvme',
        })
      ).items;
      return items.some((e) => e.reason === 'FailedScheduling') && items;
    });
    assert.match(
      events.find((e) => e.reason === 'FailedScheduling')!.message,
      /0\/3 nodes are available: 3 node\(s\) didn't match Pod's node affinity\/selector/,
    );
    const pending = await getPod('select', 'nvme');
    assert.equal(pending.spec?.nodeName, undefined);
    assert.equal(pending.status?.conditions?.find((c) => c.type === 'PodScheduled')?.reason, 'Unschedulable');
    // A node gets the label: the pod is looked at again and placed there.
    await client.patch(resources.nodes, 'node-1', undefined, { metadata: { labels: { disktype: 'nvme' } } }, 'merge');
    await waitFor('nvme pod on node-1', async () => (await getPod('select', 'nvme')).spec?.nodeName === 'node-1');
  });

  it('a restartPolicy Never pod with exit-after-ms runs, then Succeeds', async () => {
    await namespace('job');
    await createPod(
      'job',
      'once',
      { restartPolicy: 'Never' },
      { [vifKey]: vif('10.0.0.6'), [exitAfterAnnotation]: '200' },
    );
    const done = await waitFor('Succeeded', async () => {
      const p = await getPod('job', 'once');
      return p.status?.phase === 'Succeeded' && p;
    });
    assert.equal(done.status?.podIP, '10.0.0.6');
    assert.ok(
      done.status?.containerStatuses?.every(
        (c) => 'terminated' in c.state && c.state.terminated.reason === 'Completed',
      ),
    );
  });

  it('removes a deleted pod once its grace period (capped) has passed', async () => {
    await namespace('grace');
    await createPod('grace', 'slow', {}, { [vifKey]: vif('10.0.0.7') });
    await waitFor('Running', async () => (await getPod('grace', 'slow')).status?.phase === 'Running');
    const started = Date.now();
    await client.delete(resources.pods, 'slow', 'grace');
    const terminating = await getPod('grace', 'slow');
    assert.equal(terminating.metadata.deletionGracePeriodSeconds, 30, 'the server made the delete graceful');
    await waitFor('pod removed', () => gone(resources.pods, 'slow', 'grace'), { timeoutMs: 20_000 });
    assert.ok(Date.now() - started < 20_000, 'the 30 s grace is capped by deleteGraceMs');
  });

  it('a deleted namespace disappears once empty, but not while another finalizer is on it', async () => {
    await namespace('short-lived');
    await namespace('held', ['raven.openstack.org/network']);
    for (const ns of ['short-lived', 'held']) await createPod(ns, 'web', {}, { [vifKey]: vif('10.0.0.8') });
    await waitFor(
      'pods running',
      async () =>
        (await getPod('short-lived', 'web')).status?.phase === 'Running' &&
        (await getPod('held', 'web')).status?.phase === 'Running',
    );
    await client.delete(resources.namespaces, 'short-lived');
    await client.delete(resources.namespaces, 'held');
    await waitFor('short-lived gone', () => gone(resources.namespaces, 'short-lived'), { timeoutMs: 10_000 });
    await waitFor('the pod in held gone', () => gone(resources.pods, 'web', 'held'), { timeoutMs: 10_000 });
    await sleep(500);
    const held = await client.get<Namespace>(resources.namespaces, 'held');
    assert.equal(held.status?.phase, 'Terminating');
    assert.deepEqual(held.metadata.finalizers, ['raven.openstack.org/network']);
    await client.patch(resources.namespaces, 'held', undefined, { metadata: { finalizers: null } }, 'merge');
    await waitFor('held gone', () => gone(resources.namespaces, 'held'));
  });

  it('registers a deleted node again', async () => {
    await client.delete(resources.nodes, 'node-2');
    await waitFor('node-2 back', async () => {
      const node = await client.get<Node>(resources.nodes, 'node-2').catch(() => undefined);
      return node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    });
  });

  it('keeps a Deployment at its replicas from the current template, and counts them in its status', async () => {
    await namespace('deploy');
    const template = (image: string) => ({
      metadata: { labels: { app: 'web' }, annotations: { [vifKey]: vif('10.0.0.9') } },
      spec: { containers: [{ name: 'web', image }] },
    });
    const deployment = await client.create<Deployment>(resources.deployments, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'deploy' },
      spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: template('nginx:1.25') },
    });
    const podsOf = async () =>
      (await client.list<Pod>(resources.pods, { namespace: 'deploy' })).items.filter(
        (p) => !p.metadata.deletionTimestamp,
      );
    const status = () => client.get<Deployment>(resources.deployments, 'web', 'deploy').then((d) => d.status);
    await waitFor('3 ready replicas', async () => (await status())?.readyReplicas === 3, { timeoutMs: 20_000 });
    const first = await podsOf();
    assert.equal(first.length, 3);
    for (const pod of first) {
      assert.match(pod.metadata.name!, /^web-[0-9a-f]{8}-[a-z0-9]{5}$/);
      assert.deepEqual(
        pod.metadata.ownerReferences?.map((o) => [o.kind, o.uid, o.controller]),
        [['Deployment', deployment.metadata.uid, true]],
      );
    }
    assert.deepEqual(
      (await status())?.conditions?.map((c) => [c.type, c.status]),
      [['Available', 'True']],
    );
    // A new template: every pod replaced; fewer replicas: pods deleted.
    await client.patch(
      resources.deployments,
      'web',
      'deploy',
      { spec: { replicas: 2, template: template('nginx:1.26') } },
      'merge',
    );
    await waitFor(
      '2 pods of the new template',
      async () => {
        const pods = await podsOf();
        return pods.length === 2 && pods.every((p) => p.spec?.containers?.[0]?.image === 'nginx:1.26');
      },
      { timeoutMs: 20_000 },
    );
    await waitFor('status of 2 updated ready replicas', async () => {
      const s = await status();
      return s?.replicas === 2 && s.updatedReplicas === 2 && s.readyReplicas === 2;
    });
  });
});
