import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { secretHooks } from './secrets.ts';

describe('Secret defaults', () => {
  it('fills type Opaque only when it is missing', () => {
    const plain: KubeObject = { metadata: { name: 's' }, data: { a: 'YQ==' } };
    secretHooks.defaults!(plain);
    assert.equal(plain.type, 'Opaque');
    const tls: KubeObject = { metadata: { name: 't' }, type: 'kubernetes.io/tls' };
    secretHooks.defaults!(tls);
    assert.equal(tls.type, 'kubernetes.io/tls');
  });
});
