import { readFile } from 'node:fs/promises';
import { ip } from './exec.ts';
import { CniError } from './spec/index.ts';
import type { PlugPlan } from './verify.ts';
import { createPodVeth, deleteLink, exists, showLink, type Sandbox } from './veth.ts';

export interface Plugged {
  /** The host-side interface the result names: the host end, or (a subport) the VM's NIC; default `plan.tap`. */
  hostName?: string;
  hostMac: string;
  /** Whether this ADD made the network's bridge (the first pod of the network on this node). */
  bridgeCreated: boolean;
}

/**
 * Plugs the pod on a linuxbridge node (docs/vif-cni.md, "Plugging on a linuxbridge node"): the pod's veth pair
 * (`createPodVeth`), the host end enslaved to the network's bridge and up (the agent never does that for `compute:*`
 * ports). On any failure the pair is removed again, so a failed ADD leaves nothing behind (a bridge it made stays: the
 * agent owns it from then on, and removes it with the network).
 */
export async function plugLinuxBridge(plan: PlugPlan, sandbox: Sandbox, signal: AbortSignal): Promise<Plugged> {
  await createPodVeth(plan, sandbox, signal);
  try {
    const bridgeCreated = await ensureBridge(plan.bridge, String(plan.mtu), signal);
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

/** The bridge the host end is enslaved to, for CHECK ('' when none). */
export async function hostMaster(tap: string): Promise<string> {
  return (await showLink(tap))?.master ?? '';
}
