import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { parseCidr } from '../../core/index.ts';
import type { AdmittedPeers } from '../network/index.ts';
import { listenerAccess, MAX_POLICY_CIDRS, type ListenerAccessInput } from './access.ts';

const cidrs = (...texts: string[]): AdmittedPeers => ({ everyone: false, cidrs: texts.map((t) => parseCidr(t)!.cidr) });
const member = (address: string, port = 8080) => ({ address, protocol_port: port });

/** Pods at 10.0.1.x; each pod's policies as given by address. */
function input(policies: Record<string, AdmittedPeers>, over: Partial<ListenerAccessInput> = {}): ListenerAccessInput {
  return {
    protocol: 'TCP',
    members: Object.keys(policies).map((a) => member(a)),
    podOf: (address) => (address.startsWith('10.0.1.') ? `ns/pod-${address}` : undefined),
    peers: (pod) => policies[pod.slice('ns/pod-'.length)] ?? { everyone: true },
    sourceRanges: [],
    family: 4,
    podRanges: ['10.0.0.0/16'],
    ...over,
  };
}

describe('listenerAccess', () => {
  it('no member restricted: the listener is as without policies (open, or loadBalancerSourceRanges)', () => {
    const open = listenerAccess(input({ '10.0.1.5': { everyone: true }, '192.0.2.9': cidrs('10.0.1.7/32') }));
    // 192.0.2.9 is no pod: its "policies" are never asked.
    assert.equal(open.allowedCidrs, null);
    assert.equal(open.members.length, 2);
    const ranged = listenerAccess(input({ '10.0.1.5': { everyone: true } }, { sourceRanges: ['203.0.113.0/24'] }));
    assert.deepEqual(ranged.allowedCidrs, ['10.0.0.0/16', '203.0.113.0/24']);
  });

  it("the listener admits what every member's policies admit (the intersection)", () => {
    const got = listenerAccess(
      input({
        '10.0.1.5': cidrs('10.0.1.7/32', '10.0.1.8/32', '198.51.100.0/24'),
        '10.0.1.6': cidrs('10.0.1.8/32', '198.51.100.128/25'),
        '10.0.1.9': { everyone: true },
      }),
    );
    assert.deepEqual(got.allowedCidrs, ['10.0.1.8/32', '198.51.100.128/25']);
    assert.deepEqual(
      got.members.map((m) => m.address),
      ['10.0.1.5', '10.0.1.6', '10.0.1.9'],
    );
  });

  it('a member whose policies admit no one on its port is left out; disjoint members admit no client', () => {
    const got = listenerAccess(input({ '10.0.1.5': cidrs(), '10.0.1.6': cidrs('10.0.1.7/32') }));
    assert.deepEqual(got.notAdmitted, [member('10.0.1.5')]);
    assert.deepEqual(got.allowedCidrs, ['10.0.1.7/32']);
    const disjoint = listenerAccess(input({ '10.0.1.5': cidrs('10.0.1.8/32'), '10.0.1.6': cidrs('10.0.1.7/32') }));
    assert.deepEqual(disjoint.allowedCidrs, ['0.0.0.0/32']);
  });

  it("loadBalancerSourceRanges intersect, the pods' ranges kept (in-cluster clients of the clusterIP)", () => {
    const policies = { '10.0.1.5': cidrs('10.0.1.7/32', '198.51.100.0/24', '203.0.113.0/24') };
    const got = listenerAccess(input(policies, { sourceRanges: ['203.0.113.128/25'] }));
    assert.deepEqual(got.allowedCidrs, ['10.0.1.7/32', '203.0.113.128/25']);
  });

  it("only the VIP's family; none left admits no client of it", () => {
    const got = listenerAccess(input({ '10.0.1.5': cidrs('fd00::7/128') }));
    assert.deepEqual(got.allowedCidrs, ['0.0.0.0/32']);
    const v6 = listenerAccess(input({ '10.0.1.5': cidrs('fd00::7/128', '10.0.1.7/32') }, { family: 6 }));
    assert.deepEqual(v6.allowedCidrs, ['fd00::7/128']);
  });

  it(`past ${MAX_POLICY_CIDRS} CIDRs the listener fails closed and says how many`, () => {
    // Every other address of 10.0.2.0/23: 256 CIDRs no aggregation can merge, plus one.
    const many = Array.from(
      { length: MAX_POLICY_CIDRS + 1 },
      (_, n) => `10.0.${2 + Math.floor((2 * n) / 256)}.${(2 * n) % 256}/32`,
    );
    const got = listenerAccess(input({ '10.0.1.5': cidrs(...many) }));
    assert.deepEqual(got.allowedCidrs, ['0.0.0.0/32']);
    assert.equal(got.capped, MAX_POLICY_CIDRS + 1);
    const fits = listenerAccess(input({ '10.0.1.5': cidrs(...many.slice(1)) }));
    assert.equal(fits.allowedCidrs?.length, MAX_POLICY_CIDRS);
    assert.equal(fits.capped, undefined);
  });
});
