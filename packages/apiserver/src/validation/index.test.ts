import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { kindValidators } from './index.ts';

describe('kindValidators', () => {
  it('covers the built-in kinds, keyed group/Kind', () => {
    assert.deepEqual(Object.keys(kindValidators).sort(), [
      '/ConfigMap',
      '/Event',
      '/Namespace',
      '/Node',
      '/Pod',
      '/ResourceQuota',
      '/Secret',
      '/Service',
      'apiextensions.k8s.io/CustomResourceDefinition',
      'apps/Deployment',
      'coordination.k8s.io/Lease',
      'discovery.k8s.io/EndpointSlice',
      'events.k8s.io/Event',
      'networking.k8s.io/NetworkPolicy',
      'rbac.authorization.k8s.io/ClusterRole',
      'rbac.authorization.k8s.io/ClusterRoleBinding',
      'rbac.authorization.k8s.io/Role',
      'rbac.authorization.k8s.io/RoleBinding',
    ]);
    assert.ok(Object.isFrozen(kindValidators));
  });

  it('has no rules beyond metadata for Namespace and Node', () => {
    const ns: KubeObject = { metadata: { name: 'default' }, spec: { finalizers: ['kubernetes'] } };
    assert.deepEqual(kindValidators['/Namespace']?.(ns, ns), []);
    assert.deepEqual(kindValidators['/Node']?.({ metadata: { name: 'n' }, spec: { podCIDR: 'x' } }), []);
  });

  it('never throws on malformed bodies', () => {
    const junk: unknown[] = [undefined, null, 1, 'x', [], {}, [null], { a: null }];
    for (const [key, validate] of Object.entries(kindValidators)) {
      for (const value of junk) {
        const obj = {
          metadata: { name: 'x', namespace: 'd' },
          spec: value,
          data: value,
          endpoints: value,
          ports: value,
          involvedObject: value,
          regarding: value,
          rules: value,
          roleRef: value,
          subjects: value,
        } as KubeObject;
        const old = { metadata: { name: 'x' }, spec: value, immutable: true } as KubeObject;
        assert.doesNotThrow(() => validate(obj), `${key} create with ${JSON.stringify(value)}`);
        assert.doesNotThrow(() => validate(obj, old), `${key} update with ${JSON.stringify(value)}`);
      }
    }
  });
});
