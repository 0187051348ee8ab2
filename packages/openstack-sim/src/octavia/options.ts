import { formatCidr, parseCidr, parseIp } from '../../../../src/core/index.ts';
import { octaviaError } from '../http.ts';
import { validationFailure } from './common.ts';

/**
 * The checks Zed's API makes on listener and pool options (measured on the real service, test/contract/openstack/
 * octavia-options.test.ts): `allowed_cidrs` of the VIP's family only, stored as networks without repeats (a table keyed
 * (listener, cidr), so read back in string order); `[]` clears like null; `insert_headers` only on HTTP-type listeners;
 * `persistence_timeout`/`_granularity` only on UDP and SCTP pools; the amphora provider refuses SOURCE_IP_PORT.
 */

/** Listener `allowed_cidrs` as stored: null for none, else each network once, in the table's order. */
export function allowedCidrs(value: unknown, vipAddress: string): string[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const vip = parseIp(vipAddress);
  const out = new Set<string>();
  for (const text of value as string[]) {
    const parsed = parseCidr(text);
    if (!parsed) continue; // wsme's CidrType already refused it
    if (vip && parsed.cidr.version !== vip.version)
      throw validationFailure(`CIDR ${text} IP version incompatible with VIP ${vipAddress} IP version.`);
    out.add(formatCidr(parsed.cidr));
  }
  return [...out].sort();
}

const headerProtocols = new Set(['HTTP', 'HTTPS', 'TERMINATED_HTTPS']);

/** A listener's POST or PUT attributes, checked and normalised against its protocol and the VIP. */
export function checkListenerOptions(protocol: string, vipAddress: string, attrs: Record<string, unknown>): void {
  if ('allowed_cidrs' in attrs) attrs.allowed_cidrs = allowedCidrs(attrs.allowed_cidrs, vipAddress);
  const headers = attrs.insert_headers as Record<string, unknown> | null | undefined;
  if (headers && Object.keys(headers).length > 0 && !headerProtocols.has(protocol))
    throw octaviaError(400, `insert-headers is not a valid option for a ${protocol} protocol listener.`);
}

/** A pool's POST or PUT attributes: session persistence as Octavia stores it, the amphora's algorithms. */
export function checkPoolOptions(provider: string, protocol: string, attrs: Record<string, unknown>): void {
  if (provider === 'amphora' && attrs.lb_algorithm === 'SOURCE_IP_PORT')
    throw octaviaError(
      501,
      "Provider 'amphora' does not support a requested option: Amphora provider does not support SOURCE_IP_PORT algorithm.",
    );
  const sp = attrs.session_persistence as Record<string, unknown> | null | undefined;
  if (!sp) return;
  const timed = sp.persistence_timeout != null || sp.persistence_granularity != null;
  if (timed && protocol !== 'UDP' && protocol !== 'SCTP')
    throw validationFailure('persistence_timeout and persistence_granularity is only for UDP and SCTP protocol pools.');
  attrs.session_persistence = {
    type: sp.type,
    cookie_name: sp.cookie_name ?? null,
    persistence_timeout: sp.persistence_timeout ?? null,
    persistence_granularity: sp.persistence_granularity ?? null,
  };
}
