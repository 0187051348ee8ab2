import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { VIF_ANNOTATION, type Pod } from '../../kube/api/index.ts';
import { trimNode, trimPod } from './trim.ts';

/** A replica of one template: its own copies of the labels and ports, as each watch event parses them. */
const replica = (name: string): Pod =>
  JSON.parse(
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace: 'shop', uid: `uid-${name}`, labels: { app: 'web', 'pod-template-hash': '7d9c' } },
      spec: {
        nodeName: 'node-1',
        containers: [{ name: 'web', image: 'nginx', ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }] }],
      },
    }),
  ) as Pod;

describe('trimPod', () => {
  it('keeps labels and named ports, one frozen copy for every pod of a template', () => {
    const [a, b] = [trimPod(replica('web-1')), trimPod(replica('web-2'))];
    assert.deepEqual(a.metadata.labels, { app: 'web', 'pod-template-hash': '7d9c' });
    assert.deepEqual(a.spec.containers, [
      { name: 'ports', ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }] },
    ]);
    assert.equal(a.metadata.labels, b.metadata.labels);
    assert.equal(a.spec.containers, b.spec.containers);
    assert.ok(Object.isFrozen(a.metadata.labels) && Object.isFrozen(a.spec.containers[0]!.ports[0]));
    const other = replica('db-1');
    other.metadata.labels = { app: 'db' };
    assert.notEqual(trimPod(other).metadata.labels, a.metadata.labels);
  });

  it('keeps the VIF annotation and drops every other one', () => {
    const pod = replica('web-3');
    const annotations = { [VIF_ANNOTATION]: '{"version":1}', 'kubectl.kubernetes.io/last-applied-configuration': '{}' };
    pod.metadata.annotations = annotations;
    assert.deepEqual(trimPod(pod).metadata.annotations, { [VIF_ANNOTATION]: '{"version":1}' });
    pod.metadata.annotations = { team: 'shop' };
    assert.equal(trimPod(pod).metadata.annotations, undefined);
  });
});

describe('trimNode', () => {
  it("keeps a VM's providerID (nested pods) and nothing else of the spec", () => {
    const node = {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'vm-1', uid: 'u', resourceVersion: '3', labels: { a: 'b' } },
      spec: { providerID: 'openstack:///0a4b6c8d-1e2f-4a5b-8c7d-9e0f1a2b3c4d', podCIDR: '10.0.0.0/24' },
    };
    assert.deepEqual(trimNode(node).spec, { providerID: node.spec.providerID });
    assert.equal(trimNode({ ...node, spec: {} }).spec, undefined);
  });
});
