import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { providerIdentity } from './provider-id.ts';

const ID = '0a4b6c8d-1e2f-4a5b-8c7d-9e0f1a2b3c4d';

describe('providerIdentity', () => {
  it('reads both forms openstack-cloud-controller-manager writes', () => {
    assert.deepEqual(providerIdentity(`openstack:///${ID}`), { kind: 'server', serverId: ID, region: '' });
    assert.deepEqual(providerIdentity(`openstack://RegionOne/${ID.toUpperCase()}`), {
      kind: 'server',
      serverId: ID,
      region: 'RegionOne',
    });
  });

  it('a node of no or another provider is a bare host', () => {
    for (const id of [undefined, '', 'aws:///us-east-1a/i-0123', 'kind://docker/kind/node', 'openstack:/x'])
      assert.deepEqual(providerIdentity(id), { kind: 'other' }, String(id));
  });

  it('refuses a malformed openstack id, in bounded time', () => {
    for (const id of [
      'openstack:///not-a-uuid',
      `openstack:///${ID}/extra`,
      `openstack://a/b/${ID}`,
      `openstack://${'r'.repeat(65)}/${ID}`,
      `openstack:// /${ID}`,
      `openstack:///${ID}\n`,
    ])
      assert.equal(providerIdentity(id).kind, 'invalid', JSON.stringify(id));
    // Capped before the regular expression runs: a megabyte is refused by its length.
    const huge = providerIdentity(`openstack://${'a'.repeat(1_000_000)}/${ID}`);
    assert.equal(huge.kind === 'invalid' && huge.reason, 'it is longer than 160 characters');
  });
});
