import { RetryableError } from '../../controller/index.ts';
import { cidrContains, parseCidr, parseIp } from '../../core/index.ts';
import { OpenStackError, type FloatingIp, type NeutronClient, type Port } from '../../openstack/index.ts';
import { ownerOf, ownerTags, WAIT_FOR_OUTSIDE_FIX_MS } from '../network/index.ts';

/**
 * Floating IPs of a Service: for `type: LoadBalancer` one on the VIP port (the `loadBalancerIP` when it names one,
 * else a new one from `floatingIpNetworkId`), and one per `externalIPs` address.
 *
 * Ownership: a floating IP Raven creates carries the load balancer's name as its `description` in the create
 * request itself (so even one whose tagging was cut short by a crash is recognised), and the owner tags right after.
 * Raven deletes only those. An address a Service names is allocated for it when free; a floating IP someone else
 * allocated is associated only when it is granted to the Service — tagged `raven.grant=<namespace>/<name>` or
 * `raven.grant=<namespace>`, or in `floatingIps.adoptCidrs` / `adoptProjects` — else a Warning and nothing (any
 * namespace could otherwise take any address of the external range: CVE-2020-8554's class). A granted one is
 * disassociated, never deleted, when no longer wanted.
 */
export interface FloatingIpInput {
  neutron: NeutronClient;
  clusterId: string;
  lbName: string;
  uid: string;
  /** `namespace/name`, for messages and grants. */
  service: string;
  vipPort: Port;
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
  policy: { allowExternalIPs: boolean; adoptCidrs: readonly string[]; adoptProjects: readonly string[] };
}

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
  /** Allocate one: at `address`, or any free one for the load balancer itself. */
  | { kind: 'create'; address: string | undefined }
  /** Ours and no longer wanted. */
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

  for (const address of requested) {
    let fip = ours.find((f) => f.floating_ip_address === address);
    if (!fip) {
      const [existing] = await neutron.floatingIps.list({ floating_ip_address: address }, { signal });
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
    if (fip) use(fip);
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
    if (own) {
      use(own);
      decision.lbAddress = own.floating_ip_address;
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
  return decision;
}

/**
 * `keep-floatingip`: instead of deleting a floating IP Raven allocated, it is disassociated and handed to the Service's
 * name — Raven's owner tags and description give way to the grant `raven.grant=<namespace>/<name>` — so the GC never
 * takes it and a Service of that name may claim it again with `loadBalancerIP`.
 */
export async function keepFloatingIp(
  neutron: NeutronClient,
  fip: FloatingIp,
  service: string,
  signal: AbortSignal,
): Promise<void> {
  await neutron.floatingIps.update(
    fip.id,
    { port_id: null, description: `kept for service ${service} (keep-floatingip)` },
    { signal },
  );
  await neutron.tags.replace('floatingips', fip.id, [`${TAG_GRANT}=${service}`], { signal });
}

/** One line per action, for `raven plan`. */
export function describeFloatingIpAction(action: FloatingIpAction, service: string): string {
  switch (action.kind) {
    case 'associate':
      return `~ floating IP ${action.fip.floating_ip_address} associated with the VIP of service ${service}`;
    case 'tag':
      return `~ floating IP ${action.fip.floating_ip_address} tagged for service ${service}`;
    case 'create':
      return `+ floating IP ${action.address ?? '(any free address)'} for service ${service}`;
    case 'delete':
      return `- floating IP ${action.fip.floating_ip_address} of service ${service}`;
    case 'disassociate':
      return `~ floating IP ${action.fip.floating_ip_address} disassociated from service ${service} (not deleted: not Raven's)`;
  }
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
        if (input.keep) await keepFloatingIp(neutron, action.fip, input.service, signal);
        else await neutron.floatingIps.delete(action.fip.id, { signal });
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
