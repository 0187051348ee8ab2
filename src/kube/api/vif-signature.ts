import { createHmac, timingSafeEqual } from 'node:crypto';
import { formatVif, type Vif, type VifSignature } from './vif.ts';

/** A VIF key shorter than this is refused: HMAC-SHA256's own block of strength. */
export const VIF_KEY_MIN_BYTES = 32;

/** What the HMAC covers: every field Raven writes but `active` (`nested` included), then the signature's own fields. */
function signedContent(vif: Vif, s: Omit<VifSignature, 'hmac'>): string {
  const { signed: _, ...unsigned } = vif;
  return `${formatVif({ ...unsigned, active: false })}\n${JSON.stringify([s.node, s.plug, s.epoch])}`;
}

const hmacOf = (key: Uint8Array, content: string): Buffer => createHmac('sha256', key).update(content).digest();

/** The VIF with Raven's signature for a port bound on `node`, signed by the leader of `epoch`. */
export function signVif(vif: Vif, key: Uint8Array, s: Omit<VifSignature, 'hmac'>): Vif {
  return { ...vif, signed: { ...s, hmac: hmacOf(key, signedContent(vif, s)).toString('base64url') } };
}

/**
 * Whether the VIF carries a well-formed signature that `key` made over exactly these fields. The annotation is a
 * tenant's to write: every field of the signature is checked for its type before it is used, and the comparison is
 * in constant time.
 */
export function vifSignatureValid(vif: Vif, key: Uint8Array): vif is Vif & { signed: VifSignature } {
  const s = vif.signed as Partial<VifSignature> | undefined;
  if (
    typeof s !== 'object' ||
    s === null ||
    typeof s.node !== 'string' ||
    (s.plug !== 'bridge' && s.plug !== 'ovs' && s.plug !== 'vlan') ||
    typeof s.epoch !== 'number' ||
    !Number.isSafeInteger(s.epoch) ||
    typeof s.hmac !== 'string' ||
    s.hmac.length > 64
  )
    return false;
  const given = Buffer.from(s.hmac, 'base64url');
  let expected: Buffer;
  try {
    expected = hmacOf(key, signedContent(vif, { node: s.node, plug: s.plug, epoch: s.epoch }));
  } catch {
    return false; // fields of the wrong shape (an address list of nulls): nothing Raven signed
  }
  return given.length === expected.length && timingSafeEqual(given, expected);
}
