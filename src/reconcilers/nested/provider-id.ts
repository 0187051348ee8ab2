/** Longest `providerID` looked at: a region name and a UUID fit many times over; anything longer is not a Nova VM's. */
const MAX_PROVIDER_ID = 160;
const PREFIX = 'openstack://';
/** `openstack:///<server id>` or `openstack://<region>/<server id>` (openstack-cloud-controller-manager's forms). */
const NOVA_RE = /^openstack:\/\/([A-Za-z0-9._-]{0,64})\/([0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12})$/;

/** What a Node's `spec.providerID` says about it. */
export type ProviderIdentity =
  /** Not an OpenStack server (unset, or another provider's): a bare host, networked as before. */
  | { kind: 'other' }
  /** It claims to be an OpenStack server but is not of either form: the Node is told (Warning). */
  | { kind: 'invalid'; reason: string }
  /** A Nova VM: its server id (lower case, as Nova writes it in `device_id`) and region, if the id names one. */
  | { kind: 'server'; serverId: string; region: string };

/**
 * Parses a Node's `providerID` strictly, in bounded time (a length cap, then one anchored regular expression without
 * nested repetition): a tenant-independent field, but one any cluster admin tool may write garbage into.
 *
 * @example
 * providerIdentity('openstack:///0a4b…') // { kind: 'server', serverId: '0a4b…', region: '' }
 */
export function providerIdentity(providerID: string | undefined): ProviderIdentity {
  if (!providerID?.startsWith(PREFIX)) return { kind: 'other' };
  if (providerID.length > MAX_PROVIDER_ID)
    return { kind: 'invalid', reason: `it is longer than ${MAX_PROVIDER_ID} characters` };
  const m = NOVA_RE.exec(providerID);
  if (!m)
    return { kind: 'invalid', reason: 'it is neither openstack:///<server id> nor openstack://<region>/<server id>' };
  return { kind: 'server', serverId: m[2]!.toLowerCase(), region: m[1]! };
}
