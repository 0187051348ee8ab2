import { formatVif, signVif, vifSignatureValid, type Vif } from '../../kube/api/index.ts';
import { familySubnets, type SubnetInfo } from '../network/index.ts';
import type { RecordedPort } from './port-record.ts';

/** Raven's VIF key and its leader's term: what a signed VIF carries (docs/pools.md, "Signed VIFs"). */
export interface VifSigning {
  key: Uint8Array;
  epoch(): number;
}

/**
 * The VIF a port gives a pod on `subnet`: its address on each of the network's subnets (dual-stack: the primary
 * family's first), each with that subnet's prefix length and gateway; signed with `signing` once the port is bound in a
 * way raven-cni plugs (before that, the node verifies it against Neutron).
 */
export function vifFor(podUid: string, port: RecordedPort, subnet: SubnetInfo, signing?: VifSigning): Vif {
  const vif = unsignedVif(podUid, port, subnet);
  if (!signing || !port.plug || !port.hostId) return vif;
  return signVif(vif, signing.key, { node: port.hostId, plug: port.plug, epoch: signing.epoch() });
}

function unsignedVif(podUid: string, port: RecordedPort, subnet: SubnetInfo): Vif {
  return {
    version: 1,
    podUid,
    portId: port.id,
    networkId: port.networkId,
    subnetId: subnet.subnetId,
    mac: port.mac,
    ips: familySubnets(subnet).flatMap((s) => {
      const prefixLength = Number(s.cidr.split('/')[1]);
      return port.fixedIps
        .filter((ip) => ip.subnetId === s.subnetId)
        .map((ip) => ({ address: ip.address, prefixLength, gateway: s.gatewayIp }));
    }),
    mtu: subnet.mtu,
    active: port.active,
  };
}

/**
 * Whether a port is where a pod of `subnet` belongs: on its network, with an address on each of its subnets (a port
 * of a single-stack network made dual-stack later does not fit: the pod gets a port with both families).
 */
export function portFits(port: Pick<RecordedPort, 'networkId' | 'fixedIps'>, subnet: SubnetInfo): boolean {
  return (
    port.networkId === subnet.networkId &&
    familySubnets(subnet).every((s) => port.fixedIps.some((ip) => ip.subnetId === s.subnetId))
  );
}

/**
 * Whether the annotation's text is the VIF Raven would write. `active` is left out: it is the port's status when the
 * annotation was written, and Raven does not rewrite it when the port binds later. So is the signature's term, when
 * `key` verifies it and it signs the same node and plug: a new leader does not rewrite every pod. Anything else —
 * another port, an address, an extra field, another key order — is a difference.
 */
export function annotationMatches(
  current: string | undefined,
  parsed: Vif | undefined,
  expected: Vif,
  key?: Uint8Array,
): boolean {
  const earlier = parsed?.signed;
  const keep =
    key &&
    parsed &&
    earlier &&
    expected.signed &&
    earlier.node === expected.signed.node &&
    earlier.plug === expected.signed.plug &&
    vifSignatureValid(parsed, key);
  return current === formatVif({ ...expected, active: parsed?.active === true, ...(keep ? { signed: earlier } : {}) });
}

/** Whether the annotation differs from Raven's VIF in its signature alone (none yet, or another): no tampering. */
export function differsInSignatureOnly(parsed: Vif | undefined, expected: Vif): boolean {
  if (!parsed) return false;
  const unsigned = (v: Vif) => formatVif({ ...v, active: false, signed: undefined });
  return unsigned(parsed) === unsigned(expected);
}

const FIELDS = ['podUid', 'portId', 'networkId', 'subnetId', 'mac', 'ips', 'mtu'] as const;

/** What differs between an annotation and the VIF Raven's record gives, for the `VifTampered` message. */
export function vifDifferences(parsed: Vif | undefined, expected: Vif): string {
  if (!parsed) return 'the annotation is not a VIF';
  const differing = FIELDS.filter((f) => JSON.stringify(parsed[f]) !== JSON.stringify(expected[f])).map(
    (f) => `${f} ${JSON.stringify(parsed[f])} (Raven's record: ${JSON.stringify(expected[f])})`,
  );
  return differing.length > 0 ? differing.join('; ') : 'fields Raven does not write, or their form';
}
