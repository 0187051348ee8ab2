import { access, readFile } from 'node:fs/promises';
import { ip, isNoSuchDevice } from './exec.ts';
import { CniError } from './spec/index.ts';
import type { PlugPlan } from './verify.ts';

/** Where the container end goes: the runtime's network namespace (a path) and the interface name inside it. */
export interface Sandbox {
  netns: string;
  ifName: string;
}

export interface Plugged {
  hostMac: string;
  /** Whether this ADD made the network's bridge (the first pod of the network on this node). */
  bridgeCreated: boolean;
}

const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** Deletes a link, already-gone included. */
async function deleteLink(name: string, netns?: string): Promise<void> {
  try {
    await ip(['link', 'del', 'dev', name], netns ? { netns } : {});
  } catch (err) {
    if (!isNoSuchDevice(err)) throw err;
  }
}

/**
 * Plugs the pod on a linuxbridge node (docs/vif-cni.md, "Plugging on a linuxbridge node"): a veth pair whose host end
 * is `plan.tap` and whose container end is born inside the namespace as `ifName`, with the port's MAC and the
 * network's MTU; addresses and the default route inside; the host end enslaved to the network's bridge and up (the
 * agent never does that for `compute:*` ports). On any failure the pair is removed again, so a failed ADD leaves
 * nothing behind (a bridge it made stays: the agent owns it from then on, and removes it with the network).
 */
export async function plugLinuxBridge(plan: PlugPlan, sandbox: Sandbox, signal: AbortSignal): Promise<Plugged> {
  // A tap of this port left by an earlier sandbox: a port is plugged in one place only, the newest.
  await deleteLink(plan.tap);
  const mtu = String(plan.mtu);
  const peer = ['peer', 'name', sandbox.ifName, 'address', plan.mac, 'mtu', mtu, 'netns', sandbox.netns];
  await ip(['link', 'add', plan.tap, 'mtu', mtu, 'type', 'veth', ...peer], { signal });
  try {
    // IPv6 addresses skip duplicate address detection: Neutron owns them, and a tentative address would not answer.
    const inside = plan.ips.map(
      (a) => `addr add ${a.address}/${a.prefixLength} dev ${sandbox.ifName}${a.address.includes(':') ? ' nodad' : ''}`,
    );
    inside.push(`link set ${sandbox.ifName} up`);
    // A default route per family (dual-stack: both), through that family's first gateway.
    for (const route of defaultRoutes(plan))
      inside.push(`route add ${route.dst} via ${route.gw} dev ${sandbox.ifName}`);
    await ip(['-batch', '-'], { netns: sandbox.netns, input: inside.join('\n') + '\n', signal });
    const bridgeCreated = await ensureBridge(plan.bridge, mtu, signal);
    await ip(['link', 'set', plan.tap, 'master', plan.bridge, 'up'], { signal });
    const hostMac = (await readFile(`/sys/class/net/${plan.tap}/address`, 'utf8')).trim();
    return { hostMac, bridgeCreated };
  } catch (err) {
    await deleteLink(plan.tap).catch(() => undefined);
    throw err;
  }
}

/**
 * The network's bridge, made here when the agent has not made it yet, as os-vif does for Nova: the agent adopts a
 * bridge it finds (adds its VXLAN device, applies the security groups, marks the port ACTIVE; measured on the rig,
 * docs/dataplane.md), so the first pod of a network on a node does not wait for the agent's next poll (1–3 s). Racing
 * the agent is harmless: whoever is second finds the bridge there. STP off and no forward delay, so a new port
 * forwards at once.
 */
async function ensureBridge(bridge: string, mtu: string, signal: AbortSignal): Promise<boolean> {
  if (await exists(`/sys/class/net/${bridge}/bridge`)) return false;
  try {
    await ip(['link', 'add', bridge, 'mtu', mtu, 'type', 'bridge', 'stp_state', '0', 'forward_delay', '0'], { signal });
  } catch (err) {
    if (!(err instanceof CniError && /File exists/.test(err.message))) throw err;
    return false;
  }
  await ip(['link', 'set', bridge, 'up'], { signal });
  return true;
}

/**
 * Removes what ADD made. The container end goes with its namespace, and its peer with it; when the namespace is
 * still there, deleting the container end removes the pair. Idempotent: a missing namespace or device is success.
 */
export async function unplug(sandbox: Partial<Sandbox>, hostIfName?: string): Promise<void> {
  if (sandbox.netns && sandbox.ifName && (await exists(sandbox.netns))) await deleteLink(sandbox.ifName, sandbox.netns);
  else if (hostIfName?.startsWith('tap')) await deleteLink(hostIfName);
}

/** The default route of each family the port has a gateway for: `0.0.0.0/0` and (dual-stack, IPv6) `::/0`. */
export function defaultRoutes(plan: Pick<PlugPlan, 'ips'>): { dst: string; gw: string }[] {
  const v4 = plan.ips.find((a) => a.gateway && !a.gateway.includes(':'))?.gateway;
  const v6 = plan.ips.find((a) => a.gateway?.includes(':'))?.gateway;
  return [...(v4 ? [{ dst: '0.0.0.0/0', gw: v4 }] : []), ...(v6 ? [{ dst: '::/0', gw: v6 }] : [])];
}

interface IpLink {
  ifname: string;
  address?: string;
  mtu?: number;
  master?: string;
  operstate?: string;
  addr_info?: { family: string; local: string; prefixlen: number; scope?: string }[];
}

/** What is plugged now, for CHECK: the container end's MAC, MTU and addresses, its default gateway, the tap's bridge. */
export async function inspectPlug(sandbox: Sandbox, tap: string) {
  const [inside, routes, routes6, host] = await Promise.all([
    ip(['-j', 'addr', 'show', 'dev', sandbox.ifName], { netns: sandbox.netns }),
    ip(['-j', 'route', 'show', 'default'], { netns: sandbox.netns }),
    ip(['-j', '-6', 'route', 'show', 'default'], { netns: sandbox.netns }),
    ip(['-j', 'link', 'show', 'dev', tap]),
  ]);
  const link = (JSON.parse(inside) as IpLink[])[0];
  const hostLink = (JSON.parse(host) as IpLink[])[0];
  const gateways = [routes, routes6].flatMap((text) =>
    (JSON.parse(text) as { gateway?: string; dev?: string }[]).flatMap((r) =>
      r.dev === sandbox.ifName && r.gateway ? [r.gateway] : [],
    ),
  );
  return {
    mac: link?.address ?? '',
    mtu: link?.mtu ?? 0,
    // IPv4 and global IPv6 addresses (not the link-local one the kernel gives every interface).
    addresses: (link?.addr_info ?? [])
      .filter((a) => a.family === 'inet' || (a.family === 'inet6' && a.scope === 'global'))
      .map((a) => `${a.local}/${a.prefixlen}`),
    gateways,
    hostMaster: hostLink?.master ?? '',
  };
}
