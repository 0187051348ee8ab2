import { access } from 'node:fs/promises';
import { ip, isNoSuchDevice } from './exec.ts';
import type { PlugPlan } from './verify.ts';

/** Where the container end goes: the runtime's network namespace (a path) and the interface name inside it. */
export interface Sandbox {
  netns: string;
  ifName: string;
}

export const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

/** Deletes a link, already-gone included. */
export async function deleteLink(name: string, netns?: string): Promise<void> {
  try {
    await ip(['link', 'del', 'dev', name], netns ? { netns } : {});
  } catch (err) {
    if (!isNoSuchDevice(err)) throw err;
  }
}

/**
 * The pod's veth pair, as both plugging modes make it: the host end `plan.tap` (down, in this namespace), the
 * container end born inside the namespace as `ifName` with the port's MAC and the network's MTU, its addresses and
 * default routes, up. A tap of this port left by an earlier sandbox goes first: a port is plugged in one place only,
 * the newest. The caller removes the pair when a later step fails.
 */
export async function createPodVeth(plan: PlugPlan, sandbox: Sandbox, signal: AbortSignal): Promise<void> {
  await deleteLink(plan.tap);
  const mtu = String(plan.mtu);
  const peer = ['peer', 'name', sandbox.ifName, 'address', plan.mac, 'mtu', mtu, 'netns', sandbox.netns];
  await ip(['link', 'add', plan.tap, 'mtu', mtu, 'type', 'veth', ...peer], { signal });
  try {
    await configureInside(plan, sandbox, [], signal);
  } catch (err) {
    await deleteLink(plan.tap).catch(() => undefined);
    throw err;
  }
}

/**
 * Inside the sandbox, after `first` (`ip` batch lines): the port's addresses on `ifName`, the link up, a default
 * route per family, in one `ip -batch`. IPv6 addresses skip duplicate address detection: Neutron owns them, and a
 * tentative address would not answer.
 */
export async function configureInside(
  plan: Pick<PlugPlan, 'ips'>,
  sandbox: Sandbox,
  first: string[],
  signal: AbortSignal,
): Promise<void> {
  const inside = [
    ...first,
    ...plan.ips.map(
      (a) => `addr add ${a.address}/${a.prefixLength} dev ${sandbox.ifName}${a.address.includes(':') ? ' nodad' : ''}`,
    ),
    `link set ${sandbox.ifName} up`,
    // A default route per family (dual-stack: both), through that family's first gateway.
    ...defaultRoutes(plan).map((route) => `route add ${route.dst} via ${route.gw} dev ${sandbox.ifName}`),
  ];
  await ip(['-batch', '-'], { netns: sandbox.netns, input: inside.join('\n') + '\n', signal });
}

/** The default route of each family the port has a gateway for: `0.0.0.0/0` and (dual-stack, IPv6) `::/0`. */
export function defaultRoutes(plan: Pick<PlugPlan, 'ips'>): { dst: string; gw: string }[] {
  const v4 = plan.ips.find((a) => a.gateway && !a.gateway.includes(':'))?.gateway;
  const v6 = plan.ips.find((a) => a.gateway?.includes(':'))?.gateway;
  return [...(v4 ? [{ dst: '0.0.0.0/0', gw: v4 }] : []), ...(v6 ? [{ dst: '::/0', gw: v6 }] : [])];
}

export interface IpLink {
  ifname: string;
  address?: string;
  mtu?: number;
  master?: string;
  operstate?: string;
  addr_info?: { family: string; local: string; prefixlen: number; scope?: string }[];
}

/** A link's `ip -j` description, in the root namespace. */
export async function showLink(name: string, signal?: AbortSignal): Promise<IpLink | undefined> {
  return (JSON.parse(await ip(['-j', 'link', 'show', 'dev', name], signal ? { signal } : {})) as IpLink[])[0];
}

/** What is plugged inside the sandbox now, for CHECK: the container end's MAC, MTU and addresses, its gateways. */
export async function inspectPod(sandbox: Sandbox) {
  const [inside, routes, routes6] = await Promise.all([
    ip(['-j', 'addr', 'show', 'dev', sandbox.ifName], { netns: sandbox.netns }),
    ip(['-j', 'route', 'show', 'default'], { netns: sandbox.netns }),
    ip(['-j', '-6', 'route', 'show', 'default'], { netns: sandbox.netns }),
  ]);
  const link = (JSON.parse(inside) as IpLink[])[0];
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
  };
}
