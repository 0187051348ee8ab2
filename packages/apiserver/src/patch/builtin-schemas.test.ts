import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { strategicSchemaFor } from './builtin-schemas.ts';
import { childOf, compileSchema } from './schema.ts';

describe('strategicSchemaFor', () => {
  it('knows every built-in kind the server serves', () => {
    const kinds: [string, string][] = [
      ['', 'Pod'],
      ['', 'Service'],
      ['', 'Endpoints'],
      ['', 'Node'],
      ['', 'Namespace'],
      ['', 'ConfigMap'],
      ['', 'Secret'],
      ['', 'ServiceAccount'],
      ['', 'Event'],
      ['discovery.k8s.io', 'EndpointSlice'],
      ['coordination.k8s.io', 'Lease'],
      ['networking.k8s.io', 'NetworkPolicy'],
      ['events.k8s.io', 'Event'],
    ];
    for (const [group, kind] of kinds) {
      const schema = strategicSchemaFor(group, kind);
      assert.ok(schema, `${group}/${kind}`);
      assert.deepEqual(schema.lists['metadata.finalizers'], { patchStrategy: 'merge' });
      assert.deepEqual(schema.lists['metadata.ownerReferences'], { patchStrategy: 'merge', patchMergeKey: 'uid' });
      assert.ok(Object.isFrozen(schema) && Object.isFrozen(schema.lists));
    }
  });

  it('answers undefined for custom resources and unserved kinds (the server then replies 415)', () => {
    assert.equal(strategicSchemaFor('stable.example.com', 'CronTab'), undefined);
    assert.equal(strategicSchemaFor('batch', 'Job'), undefined);
    assert.equal(strategicSchemaFor('', 'pod'), undefined);
    assert.equal(strategicSchemaFor('core', 'Pod'), undefined);
  });

  it('carries the Pod merge keys of the Go types', () => {
    const lists = strategicSchemaFor('', 'Pod')?.lists ?? {};
    const keyOf = (path: string): string | undefined => lists[path]?.patchMergeKey;
    assert.equal(keyOf('spec.containers'), 'name');
    assert.equal(keyOf('spec.initContainers'), 'name');
    assert.equal(keyOf('spec.ephemeralContainers'), 'name');
    assert.equal(keyOf('spec.volumes'), 'name');
    assert.equal(keyOf('spec.imagePullSecrets'), 'name');
    assert.equal(keyOf('spec.hostAliases'), 'ip');
    assert.equal(keyOf('spec.topologySpreadConstraints'), 'topologyKey');
    for (const c of ['containers', 'initContainers', 'ephemeralContainers']) {
      assert.equal(keyOf(`spec.${c}[].env`), 'name');
      assert.equal(keyOf(`spec.${c}[].ports`), 'containerPort');
      assert.equal(keyOf(`spec.${c}[].volumeMounts`), 'mountPath');
      assert.equal(keyOf(`spec.${c}[].volumeDevices`), 'devicePath');
      for (const replaced of ['envFrom', 'args', 'command']) assert.equal(lists[`spec.${c}[].${replaced}`], undefined);
    }
    assert.equal(lists['spec.tolerations'], undefined);
    assert.equal(keyOf('status.conditions'), 'type');
    assert.equal(keyOf('status.podIPs'), 'ip');
    assert.equal(lists['status.containerStatuses'], undefined);
  });

  it('carries the Service, Node, Namespace and ServiceAccount merge keys', () => {
    assert.equal(strategicSchemaFor('', 'Service')?.lists['spec.ports']?.patchMergeKey, 'port');
    assert.equal(strategicSchemaFor('', 'Service')?.lists['status.conditions']?.patchMergeKey, 'type');
    const node = strategicSchemaFor('', 'Node')?.lists ?? {};
    assert.equal(node['status.conditions']?.patchMergeKey, 'type');
    assert.equal(node['status.addresses']?.patchMergeKey, 'type');
    assert.deepEqual(node['spec.podCIDRs'], { patchStrategy: 'merge' });
    assert.equal(node['spec.taints'], undefined);
    assert.equal(strategicSchemaFor('', 'Namespace')?.lists['status.conditions']?.patchMergeKey, 'type');
    assert.equal(strategicSchemaFor('', 'ServiceAccount')?.lists.secrets?.patchMergeKey, 'name');
  });

  it("gives Deployments their pod template's lists", () => {
    const lists = strategicSchemaFor('apps', 'Deployment')!.lists;
    assert.equal(lists['spec.template.spec.containers']?.patchMergeKey, 'name');
    assert.equal(lists['spec.template.spec.containers[].env']?.patchMergeKey, 'name');
    assert.deepEqual(lists['spec.template.metadata.finalizers'], { patchStrategy: 'merge' });
  });
});

describe('compileSchema', () => {
  it('builds a tree that steps through list elements', () => {
    const byName = { patchStrategy: 'merge', patchMergeKey: 'name' } as const;
    const root = compileSchema({ lists: { 'spec.containers': byName, 'spec.containers[].env': byName } });
    const containers = childOf(childOf(root, 'spec'), 'containers');
    assert.deepEqual(containers?.list, { patchStrategy: 'merge', patchMergeKey: 'name' });
    assert.deepEqual(childOf(containers, 'env')?.list, { patchStrategy: 'merge', patchMergeKey: 'name' });
    assert.equal(childOf(containers, 'args'), undefined);
    assert.equal(childOf(undefined, 'x'), undefined);
  });

  it('compiles each schema once', () => {
    const schema = strategicSchemaFor('', 'Pod');
    assert.ok(schema);
    assert.equal(compileSchema(schema), compileSchema(schema));
  });

  it('rejects a path with an empty field', () => {
    assert.throws(() => compileSchema({ lists: { 'spec..x': { patchStrategy: 'merge' } } }), {
      code: 'SCHEMA_INVALID',
    });
  });
});
