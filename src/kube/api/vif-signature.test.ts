import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from '../../../test/support/node-test.ts';
import { signVif, vifSignatureValid } from './vif-signature.ts';
import { formatVif, parseVif, type Vif } from './vif.ts';

const key = randomBytes(32);
const vif: Vif = {
  version: 1,
  podUid: '6f1c8a52-5d43-4c1e-9d7a-3f0b1e2d4c5a',
  portId: '0b5e7a9c-1111-4222-8333-944455566677',
  networkId: 'net-1',
  subnetId: 'sub-1',
  mac: 'fa:16:3e:12:34:56',
  ips: [{ address: '10.0.0.7', prefixLength: 24, gateway: '10.0.0.1' }],
  mtu: 1450,
  active: false,
};
const signed = signVif(vif, key, { node: 'node-1', plug: 'bridge', epoch: 3 });
/** The annotation as a node reads it: written, then parsed. */
const roundTrip = (v: Vif) => parseVif(formatVif(v))!;

describe('signed VIFs', () => {
  it('a VIF Raven signed verifies after the annotation round trip, whatever its `active`', () => {
    assert.equal(vifSignatureValid(roundTrip(signed), key), true);
    assert.equal(vifSignatureValid(roundTrip({ ...signed, active: true }), key), true);
  });

  it('any field changed, another key, or no signature: not valid', () => {
    const changed: Partial<Vif>[] = [
      { podUid: '00000000-5d43-4c1e-9d7a-3f0b1e2d4c5a' }, // copied onto another pod
      { portId: '11111111-1111-4222-8333-944455566677' },
      { networkId: 'net-2' },
      { subnetId: 'sub-2' },
      { mac: 'fa:16:3e:00:00:01' },
      { ips: [{ address: '10.0.0.8', prefixLength: 24, gateway: '10.0.0.1' }] },
      { ips: [{ address: '10.0.0.7', prefixLength: 16, gateway: '10.0.0.1' }] },
      { mtu: 9000 },
      { signed: { ...signed.signed!, node: 'node-2' } },
      { signed: { ...signed.signed!, plug: 'ovs' } },
      { signed: { ...signed.signed!, epoch: 4 } },
    ];
    for (const change of changed)
      assert.equal(vifSignatureValid(roundTrip({ ...signed, ...change }), key), false, JSON.stringify(change));
    assert.equal(vifSignatureValid(roundTrip(signed), randomBytes(32)), false);
    assert.equal(vifSignatureValid(roundTrip(vif), key), false);
  });

  it('a malformed signature or address list is refused without throwing', () => {
    const bad = [
      { ...signed, signed: { ...signed.signed!, hmac: 7 } },
      { ...signed, signed: { ...signed.signed!, plug: 'macvtap' } },
      { ...signed, signed: { ...signed.signed!, epoch: '3' } },
      { ...signed, signed: { ...signed.signed!, hmac: 'A'.repeat(10_000) } },
      { ...signed, signed: null },
      { ...signed, ips: [null] },
    ];
    for (const v of bad) assert.equal(vifSignatureValid(JSON.parse(JSON.stringify(v)) as Vif, key), false);
  });
});
