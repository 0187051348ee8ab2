import { ip } from './exec.ts';
import type { Plugged } from './linuxbridge.ts';
import { CniError, CniErrorCode } from './spec/index.ts';
import type { PlugPlan } from './verify.ts';
import { configureInside, deleteLink, type IpLink, type Sandbox } from './veth.ts';

/** `ip -j -d link` adds the link's kind (`vlan`, `veth` …) and its data; a NIC has none. */
interface IpLinkDetails extends IpLink {
  link?: string;
  linkinfo?: { info_kind?: string; info_data?: { protocol?: string; id?: number } };
}

/**
 * The VM's NIC whose MAC is the trunk parent's: a device of its own (no `linkinfo`, no lower `link`), so that a VLAN
 * sub-interface or a veth that carries the same MAC is never taken for it.
 */
export async function parentNic(mac: string, signal: AbortSignal): Promise<string> {
  const links = JSON.parse(await ip(['-j', '-d', 'link', 'show'], { signal })) as IpLinkDetails[];
  const nic = links.find((l) => l.address?.toLowerCase() === mac && !l.linkinfo?.info_kind && !l.link);
  if (!nic)
    throw new CniError(
      CniErrorCode.PORT_VERIFICATION_FAILED,
      `this VM has no NIC with MAC ${mac}, the trunk parent's: is the pod scheduled to the trunk's VM?`,
    );
  return nic.ifname;
}

/**
 * Plugs a subport (docs/cni.md, "Nested mode"): a VLAN sub-interface of the parent NIC with the VLAN id, made in the
 * VM's namespace under a name of its VLAN (`plan.tap`) with the port's MAC and the network's MTU, moved into the
 * sandbox, renamed `ifName` there, its addresses and default routes, up. A sub-interface of this VLAN left by a failed
 * ADD goes first; if any step fails, what was made goes again (in the sandbox, the namespace's end of it).
 */
export async function plugVlan(plan: PlugPlan, sandbox: Sandbox, signal: AbortSignal): Promise<Plugged> {
  const { vlan, parentMac } = plan.nested ?? {};
  if (vlan === undefined || parentMac === undefined) throw new Error(`plan for ${plan.portId} is not a subport's`);
  const nic = await parentNic(parentMac, signal);
  await deleteLink(plan.tap);
  const made = ['link', 'add', 'link', nic, 'name', plan.tap, 'address', plan.mac, 'mtu', String(plan.mtu)];
  await ip([...made, 'type', 'vlan', 'id', String(vlan)], { signal });
  try {
    await ip(['link', 'set', 'dev', plan.tap, 'netns', sandbox.netns], { signal });
    await configureInside(plan, sandbox, [`link set ${plan.tap} name ${sandbox.ifName}`], signal);
  } catch (err) {
    await deleteLink(plan.tap).catch(() => undefined);
    await deleteLink(plan.tap, sandbox.netns).catch(() => undefined);
    await deleteLink(sandbox.ifName, sandbox.netns).catch(() => undefined);
    throw err;
  }
  return { hostName: nic, hostMac: parentMac, bridgeCreated: false };
}

/** For CHECK: the sandbox's interface is an 802.1Q sub-interface with the VLAN id (or why not). */
export async function vlanProblem(sandbox: Sandbox, vlan: number, signal: AbortSignal): Promise<string | undefined> {
  const text = await ip(['-j', '-d', 'link', 'show', 'dev', sandbox.ifName], { netns: sandbox.netns, signal });
  const info = (JSON.parse(text) as IpLinkDetails[])[0]?.linkinfo;
  if (info?.info_kind !== 'vlan') return `${sandbox.ifName} is a "${info?.info_kind ?? 'plain'}" link, not a VLAN`;
  if (info.info_data?.id !== vlan)
    return `${sandbox.ifName} is on VLAN ${info.info_data?.id}, the subport's is ${vlan}`;
  return undefined;
}
