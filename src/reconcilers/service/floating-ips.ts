import { RetryableError } from '../../controller/index.ts';
import { cidrContains, parseCidr, parseIp } from '../../core/index.ts';
import { OpenStackError, type FloatingIp, type NeutronClient, type Port } from '../../openstack/index.ts';
import { namePrefix, ownerOf, ownerTags, WAIT_FOR_OUTSIDE_FIX_MS } from '../network/index.ts';
import {
  grantedToNamespace,
  inAllocationPools,
  isRavens,
  listHeldFloatingIps,
  reclaimFloatingIp,
  releaseFloatingIp,
  type NamespaceGrant,
} from './fip-ownership.ts';

/**
 * Floating IPs of a Service: for `type: LoadBalancer` one on the VIP port (the `loadBalancerIP` when it names one,
 * else a new one from `floatingIpNetworkId`), and one per `externalIPs` address.
 *
 * Ownership: a floating IP Raven creates carries the load balancer's name as its `description` in the create
 * request itself (so even one whose tagging was cut short by a crash is recognised), and the owner tags right after.
 * Raven frees only those, and not at once: one no longer wanted is kept or held for its Service's name
 * (`fip-ownership.ts`), so a redeploy gets its address back and no other tenant can take it meanwhile. An address a
 * Service names is Raven's to allocate only when the operator grants it to the namespace (`floatingIps.grants`), or,
 * with `floatingIps.allowFreeAddresses`, when it lies in an allocation pool; a floating IP someone else allocated is
 * associated only when it is granted to the Service — tagged `raven.grant=<namespace>/<name>` or
 * `raven.grant=<namespace>`, or in `floatingIps.adoptCidrs` / `adoptProjects` — and never one Raven holds for
 * another Service. Anything else is a Warning and nothing (any namespace could otherwise take any address of the
 * external range: CVE-2020-8554's class). A granted one is disassociated, never deleted, when no longer wanted.
 */
export interface FloatingIpInput {
  neutron: NeutronClient;
  clusterId: string;
  lbName: string;
  uid: string;
  /** `namespace/name`, for messages and grants. */
  service: string;
  /** The load balancer's VIP port (Raven's, or the provider's own). */
  vipPort: Pick<Port, 'id'>;
  vipAddress: string;
  loadBalancerType: boolean;
  /** `openstack-internal-load-balancer`: the VIP is the load balancer's address, no floating IP. */
  internal?: boolean;
  loadBalancerIP: string | undefined;
  externalIPs: readonly string[];
  networkId: string | undefined;
  /** The floating network's subnet to allocate from (`floating-subnet*`). */
  subnetId?: string | undefined;
  /** `keep-floatingip`: one of ours no longer wanted is handed back (see {@link keepFloatingIp}), not deleted. */
  keep?: boolean;
  /** `floatingIps` of the configuration. */
  policy: FloatingIpPolicy;
  /** Now (ms since the epoch): when a released floating IP's quarantine starts. */
  now: number;
}

/** `floatingIps` of the configuration; the optional ones default to the safe side (no free address, 1 h quarantine). */
export interface FloatingIpPolicy {
  allowExternalIPs: boolean;
  adoptCidrs: readonly string[];
  adoptProjects: readonly string[];
  /** A Service may name a free address no grant gives it (one in an allocation pool). Default false. */
  allowFreeAddresses?: boolean | undefined;
  /** Free addresses the operator gives a namespace. */
  grants?: readonly NamespaceGrant[] | undefined;
  /** How long a released floating IP is held for its Service's name. Default {@link DEFAULT_QUARANTINE_SECONDS}. */
  quarantineSeconds?: number | undefined;
}

/** The default of `floatingIps.quarantineSeconds`. */
export const DEFAULT_QUARANTINE_SECONDS = 3600;

/** The tag that grants a floating IP someone else allocated to a Service (`<namespace>/<name>`) or a namespace. */
export const TAG_GRANT = 'raven.grant';

/** Whether a floating IP someone else allocated may be claimed by the Service `namespace/name`. */
export function granted(fip: FloatingIp, service: string, policy: FloatingIpInput['policy']): boolean {
  const namespace = service.split('/')[0];
  if (fip.tags?.some((t) => t === `${TAG_GRANT}=${service}` || t === `${TAG_GRANT}=${namespace}`)) return true;
  if (policy.adoptProjects.includes(fip.project_id)) return true;
  const ip = parseIp(fip.floating_ip_address);
  return Boolean(
    ip &&
    policy.adoptCidrs.some((c) => {
      const cidr = parseCidr(c)?.cidr;
      return cidr !== undefined && cidrContains(cidr, ip);
    }),
  );
}

export interface FloatingIpResult {
  /** `status.loadBalancer.ingress` addresses. */
  ingress: string[];
  /** Problems the user must see (Warning Events), none fatal to the rest. */
  warnings: { reason: string; message: string }[];
  /** Whether anything was created, associated, tagged or deleted. */
  changed: boolean;
}

/** Floating IPs Raven created for this Service name (any uid; stale ones are torn down before this runs). */
export function listOwnFloatingIps(neutron: NeutronClient, lbName: string, signal: AbortSignal): Promise<FloatingIp[]> {
  return neutron.floatingIps.list({ description: lbName }, { signal });
}

/** One change to a Service's floating IPs. */
export type FloatingIpAction =
  /** Point it at the VIP port (ours, or granted); tag it when it is ours and untagged. */
  | { kind: 'associate'; fip: FloatingIp }
  | { kind: 'tag'; fip: FloatingIp }
  /** Kept or held for this Service's name: taken back (owner tags again) and associated. */
  | { kind: 'reclaim'; fip: FloatingIp }
  /** Allocate one: at `address`, or any free one for the load balancer itself. */
  | { kind: 'create'; address: string | undefined }
  /** Ours and no longer wanted: kept, held or deleted (`releaseFloatingIp`). */
  | { kind: 'delete'; fip: FloatingIp }
  /** Granted to the Service, no longer wanted (or no longer granted): never deleted. */
  | { kind: 'disassociate'; fip: FloatingIp };

export interface FloatingIpDecision {
  actions: FloatingIpAction[];
  warnings: { reason: string; message: string }[];
  /** The load balancer's ingress address: a floating IP's, the VIP's (no floating IP network), or none. */
  lbAddress: string | undefined;
  /** The ingress address is the one the `create` action without an address makes. */
  lbAddressCreated: boolean;
}

/**
 * What the Service's floating IPs need, without changing anything (the reconciler applies it, `raven plan` prints it).
 * `ours` are the ones Raven created for this uid (or untagged); the only calls are lists.
 */
export async function decideFloatingIps(
  input: FloatingIpInput,
  ours: readonly FloatingIp[],
  signal: AbortSignal,
): Promise<FloatingIpDecision> {
  const { neutron, vipPort } = input;
  const decision: FloatingIpDecision = { actions: [], warnings: [], lbAddress: undefined, lbAddressCreated: false };
  const attached = await neutron.floatingIps.list({ port_id: vipPort.id }, { signal });
  const keep = new Set<string>();
  if (input.externalIPs.length > 0 && !input.policy.allowExternalIPs) {
    decision.warnings.push({
      reason: 'ExternalIPsDisabled',
      message: `externalIPs of service ${input.service} are ignored: floatingIps.allowExternalIPs is off`,
    });
  }
  // Neutron maps one floating IP to one fixed IP (a second gets 409 FloatingIPPortAlreadyAssociated), and the
  // amphora answers on the VIP address alone: the VIP holds one floating IP — the load balancer's own, when it has
  // one, else the first external IP. The rest are refused here, with a Warning, rather than left to fail.
  const lbWants = input.loadBalancerType && !input.internal;
  const lbOwn = lbWants && input.loadBalancerIP ? [input.loadBalancerIP] : [];
  const slot = lbWants && (input.loadBalancerIP || input.networkId) ? 0 : 1;
  const external = input.policy.allowExternalIPs ? [...new Set(input.externalIPs)] : [];
  const requested = [...new Set([...lbOwn, ...external.slice(0, slot)])];
  const dropped = external.filter((a) => !requested.includes(a));
  if (dropped.length > 0) {
    const holder =
      lbOwn.length > 0 || slot === 0 ? "the load balancer's own floating IP" : `externalIP ${requested[0]}`;
    decision.warnings.push({
      reason: 'ExternalIPsUnsupported',
      message: `externalIPs ${dropped.join(', ')} of service ${input.service} get no floating IP: Neutron associates one floating IP with one fixed IP, and the VIP ${input.vipAddress} carries ${holder}`,
    });
  }
  const use = (fip: FloatingIp): void => {
    keep.add(fip.id);
    if (fip.port_id !== vipPort.id) decision.actions.push({ kind: 'associate', fip });
    if (ours.some((f) => f.id === fip.id) && !ownerOf(fip.tags)) decision.actions.push({ kind: 'tag', fip });
  };
  const noNetwork = (address: string | undefined): void =>
    void decision.warnings.push({
      reason: 'NoFloatingIpNetwork',
      message: `no floatingIpNetworkId is configured: service ${input.service} gets no floating IP${address ? ` for ${address}` : ''}`,
    });

  let heldFor: FloatingIp[] | undefined;
  const held = async () => (heldFor ??= await listHeldFloatingIps(neutron, input.clusterId, input.service, signal));
  const reclaim = (fip: FloatingIp): void => {
    keep.add(fip.id);
    decision.actions.push({ kind: 'reclaim', fip });
  };
  for (const address of requested) {
    let fip = ours.find((f) => f.floating_ip_address === address);
    const back = fip ? undefined : (await held()).find((f) => f.floating_ip_address === address);
    if (back) reclaim(back);
    else if (!fip) {
      const [existing] = await neutron.floatingIps.list({ floating_ip_address: address }, { signal });
      if (existing && isRavens(existing, input.clusterId, namePrefix(input.clusterId))) {
        decision.warnings.push({
          reason: 'FloatingIpNotGranted',
          message: `floating IP ${address} wanted by service ${input.service} is Raven's for another service (in use, kept or held after its release): it is not granted`,
        });
        continue;
      }
      if (!existing) {
        const refused = await refuseFreeAddress(input, address, signal);
        if (refused) {
          decision.warnings.push({ reason: 'FloatingIpNotGranted', message: refused });
          continue;
        }
      }
      if (existing && !granted(existing, input.service, input.policy)) {
        decision.warnings.push({
          reason: 'FloatingIpNotGranted',
          message: `floating IP ${address} wanted by service ${input.service} was allocated by someone else (project ${existing.project_id}): Raven associates it only when it is tagged ${TAG_GRANT}=${input.service} (or ${TAG_GRANT}=<namespace>) or is in floatingIps.adoptCidrs/adoptProjects`,
        });
        continue;
      }
      if (existing?.port_id && existing.port_id !== vipPort.id) {
        decision.warnings.push({
          reason: 'FloatingIpInUse',
          message: `floating IP ${address} wanted by service ${input.service} is associated with port ${existing.port_id}`,
        });
        continue;
      }
      fip = existing;
    }
    if (back) {
      // Taken back below.
    } else if (fip) use(fip);
    else if (input.networkId) decision.actions.push({ kind: 'create', address });
    else {
      noNetwork(address);
      continue;
    }
    if (address === input.loadBalancerIP && lbWants) decision.lbAddress = address;
  }
  if (input.loadBalancerType && input.internal) decision.lbAddress = input.vipAddress;
  else if (lbWants && !input.loadBalancerIP) {
    const own = ours.find((f) => !keep.has(f.id) && !requested.includes(f.floating_ip_address));
    // Without one of its own, the address kept or held for its name: a redeployed Service keeps its address.
    const back = own ? undefined : (await held()).find((f) => !keep.has(f.id));
    if (own) {
      use(own);
      decision.lbAddress = own.floating_ip_address;
    } else if (back) {
      reclaim(back);
      decision.lbAddress = back.floating_ip_address;
    } else if (input.networkId) {
      decision.actions.push({ kind: 'create', address: undefined });
      decision.lbAddressCreated = true;
    } else {
      // Without a floating IP network the VIP itself is the load balancer's address (reachable inside the cloud).
      decision.lbAddress = input.vipAddress;
    }
  }
  for (const fip of ours) if (!keep.has(fip.id)) decision.actions.push({ kind: 'delete', fip });
  for (const fip of attached) {
    if (!keep.has(fip.id) && !ours.some((f) => f.id === fip.id)) decision.actions.push({ kind: 'disassociate', fip });
  }
  // What leaves the VIP goes first: Neutron puts one floating IP on a fixed IP (409 FloatingIPPortAlreadyAssociated),
  // so a changed loadBalancerIP's new address can only be put there once the old one is off.
  const leaving = (a: FloatingIpAction) => a.kind === 'delete' || a.kind === 'disassociate';
  decision.actions.sort((a, b) => Number(leaving(b)) - Number(leaving(a)));
  return decision;
}

/**
 * Why a free `address` is not Raven's to allocate for the Service, or undefined when it is: granted to its namespace
 * by `floatingIps.grants` (the operator's word, which may name a block outside the pools), or — with
 * `floatingIps.allowFreeAddresses` — inside an allocation pool of the floating network (an address outside them is
 * one the cloud's operator keeps back).
 */
async function refuseFreeAddress(
  input: FloatingIpInput,
  address: string,
  signal: AbortSignal,
): Promise<string | undefined> {
  const namespace = input.service.split('/')[0]!;
  if (grantedToNamespace(input.policy.grants ?? [], namespace, address)) return undefined;
  const base = `floating IP ${address} wanted by service ${input.service} is free, but not granted to namespace ${namespace} (floatingIps.grants)`;
  if (!input.policy.allowFreeAddresses) return `${base}, and floatingIps.allowFreeAddresses is off`;
  if (!input.networkId) return undefined;
  if (await inAllocationPools(input.neutron, input.networkId, input.subnetId, address, signal)) return undefined;
  return `${base}, and it lies outside the allocation pools of floating network ${input.networkId}`;
}

/** Converges the Service's floating IPs: {@link decideFloatingIps}, applied. */
export async function ensureFloatingIps(
  input: FloatingIpInput,
  ours: readonly FloatingIp[],
  signal: AbortSignal,
): Promise<FloatingIpResult> {
  const { neutron, vipPort } = input;
  const tags = ownerTags(input.clusterId, 'service', input.uid);
  const decision = await decideFloatingIps(input, ours, signal);
  const result: FloatingIpResult = { ingress: [], warnings: [...decision.warnings], changed: false };
  let created: FloatingIp | undefined;
  const unavailable = new Set<string>();
  for (const action of decision.actions) {
    switch (action.kind) {
      case 'associate':
        await neutron.floatingIps.associate(action.fip.id, vipPort.id, undefined, { signal });
        break;
      case 'tag':
        await neutron.tags.replace('floatingips', action.fip.id, tags, { signal });
        break;
      case 'reclaim': {
        const owner = { clusterId: input.clusterId, uid: input.uid, lbName: input.lbName, portId: vipPort.id };
        await reclaimFloatingIp(neutron, action.fip, owner, signal);
        break;
      }
      case 'create': {
        const fip = await createFloatingIp(input, action.address, result, signal);
        if (!fip) {
          if (action.address) unavailable.add(action.address);
          continue;
        }
        await neutron.tags.replace('floatingips', fip.id, tags, { signal });
        if (action.address === undefined) created = fip;
        break;
      }
      case 'delete':
        await releaseFloatingIp(releaseInput(input), action.fip, signal);
        break;
      case 'disassociate':
        await neutron.floatingIps.disassociate(action.fip.id, { signal });
        break;
    }
    result.changed = true;
  }
  const lbAddress = decision.lbAddressCreated ? created?.floating_ip_address : decision.lbAddress;
  result.ingress = input.loadBalancerType && lbAddress && !unavailable.has(lbAddress) ? [lbAddress] : [];
  return result;
}

/** Allocates one on the VIP port; undefined (and a warning) when a named address cannot be had. */
async function createFloatingIp(
  input: FloatingIpInput,
  address: string | undefined,
  result: FloatingIpResult,
  signal: AbortSignal,
): Promise<FloatingIp | undefined> {
  try {
    return await input.neutron.floatingIps.create(
      {
        floating_network_id: input.networkId!,
        ...(input.subnetId ? { subnet_id: input.subnetId } : {}),
        port_id: input.vipPort.id,
        description: input.lbName,
        ...(address ? { floating_ip_address: address } : {}),
      },
      { signal },
    );
  } catch (err) {
    if (!(err instanceof OpenStackError)) throw err;
    if (err.type === 'OverQuota')
      throw new RetryableError(
        'QuotaExceeded',
        `floating IP quota exceeded for service ${input.service}: ${err.message}`,
        {
          cause: err,
          maxRetryDelayMs: WAIT_FOR_OUTSIDE_FIX_MS,
        },
      );
    if (err.type === 'ExternalGatewayForFloatingIPNotFound') {
      throw new RetryableError(
        'FloatingIpUnreachable',
        `the service subnet has no router to the floating IP network ${input.networkId}: ${err.message}`,
        { cause: err },
      );
    }
    if (address && (err.status === 400 || err.status === 409)) {
      result.warnings.push({
        reason: 'FloatingIpUnavailable',
        message: `floating IP ${address} for service ${input.service} cannot be allocated: ${err.message}`,
      });
      return undefined;
    }
    throw err;
  }
}

/** How {@link releaseFloatingIp} lets go of this Service's floating IPs. */
export function releaseInput(
  input: Pick<FloatingIpInput, 'neutron' | 'clusterId' | 'service' | 'keep' | 'policy' | 'now'>,
) {
  return {
    neutron: input.neutron,
    clusterId: input.clusterId,
    service: input.service,
    keep: input.keep ?? false,
    quarantineSeconds: input.policy.quarantineSeconds ?? DEFAULT_QUARANTINE_SECONDS,
    now: input.now,
  };
}
