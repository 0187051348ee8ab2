import { errorMessage } from '../core/index.ts';
import { run, ip } from './exec.ts';
import { CniError, CniErrorCode } from './spec/index.ts';
import type { PlugPlan } from './verify.ts';
import { createPodVeth, deleteLink, exists, showLink, type Sandbox } from './veth.ts';

/** This node's Open vSwitch, as the configuration names it (`ovs` in raven-cni's network configuration). */
export interface OvsNode {
  database: string;
  timeoutSeconds: number;
}

/** Who the OVS port is for: written into its `external_ids`, read back by CHECK and DEL. */
export interface OvsOwner {
  /** The runtime's sandbox: DEL finds the ports of its sandbox by it, and only those. */
  containerId: string;
  /** The pod's uid: os-vif's `vm-uuid` (the instance, for Nova). */
  podUid: string;
}

/** The `external_ids` key holding the sandbox's container id. */
const CONTAINER_KEY = 'raven-container-id';

/**
 * `ovs-vsctl` against the node's database, bounded twice: its own `--timeout` (a database that does not answer, or a
 * vswitchd that does not apply the change), and the child killed shortly after that. A child process because Node
 * has no well-kept OVSDB client (docs/cni.md, "Open vSwitch ports"); `ovs-vsctl` is on every OVS node.
 */
async function vsctl(ovs: OvsNode, args: readonly string[], signal: AbortSignal): Promise<string> {
  const bound = AbortSignal.timeout((ovs.timeoutSeconds + 2) * 1000);
  try {
    return await run('ovs-vsctl', [`--db=${ovs.database}`, `--timeout=${ovs.timeoutSeconds}`, ...args], {
      signal: AbortSignal.any([signal, bound]),
    });
  } catch (err) {
    if (bound.aborted && !signal.aborted)
      throw new CniError(
        CniErrorCode.IO_FAILURE,
        `ovs-vsctl (${ovs.database}) did not finish within ${ovs.timeoutSeconds} s`,
      );
    throw err;
  }
}

/** Whether the database can be there: a unix socket that exists (any other remote is tried). */
const databaseExists = async (ovs: OvsNode) =>
  !ovs.database.startsWith('unix:') || exists(ovs.database.slice('unix:'.length));

/** An OVSDB string atom: quoted, so that no value is read as ovs-vsctl syntax (a `,` or `=` in a container id). */
const atom = (value: string) => JSON.stringify(value);

/**
 * Plugs the pod into the integration bridge, as os-vif's OVS plugin does for Nova (docs/cni.md, "Open vSwitch
 * ports"): the pod's veth pair, the host end up and added to `plan.bridge` with the `external_ids` OVN and the OVS
 * agent bind by (`iface-id` = the Neutron port, `attached-mac`, `iface-status=active`, `vm-uuid`). On a userspace
 * datapath (`netdev`), the container end's TX checksum offload is turned off first: that datapath never completes a
 * partial checksum, and TCP and UDP would fail while ping works. On any failure the pair and the OVS port go again.
 */
export async function plugOvs(
  plan: PlugPlan,
  sandbox: Sandbox,
  ovs: OvsNode,
  owner: OvsOwner,
  signal: AbortSignal,
): Promise<{ hostMac: string }> {
  const datapath = await bridgeDatapath(plan.bridge, ovs, signal);
  await createPodVeth(plan, sandbox, signal);
  try {
    if (datapath === 'netdev') await txChecksumOff(sandbox, signal);
    await ip(['link', 'set', plan.tap, 'up'], { signal });
    const ids = {
      'iface-id': plan.portId,
      'attached-mac': plan.mac,
      'iface-status': 'active',
      'vm-uuid': owner.podUid,
      [CONTAINER_KEY]: owner.containerId,
    };
    await vsctl(
      ovs,
      [
        '--',
        '--if-exists',
        'del-port',
        plan.tap,
        '--',
        'add-port',
        plan.bridge,
        plan.tap,
        '--',
        'set',
        'Interface',
        plan.tap,
        ...Object.entries(ids).map(([key, value]) => `external_ids:${key}=${atom(value)}`),
      ],
      signal,
    );
    return { hostMac: (await showLink(plan.tap, signal))?.address ?? '' };
  } catch (err) {
    await vsctl(ovs, ['--if-exists', 'del-port', plan.tap], AbortSignal.timeout(30_000)).catch(() => undefined);
    await deleteLink(plan.tap).catch(() => undefined);
    throw err;
  }
}

/** The bridge's datapath type (`system`, `netdev`); a bridge OVS does not have is a configuration error. */
async function bridgeDatapath(bridge: string, ovs: OvsNode, signal: AbortSignal): Promise<string> {
  // ovs-vsctl would retry a missing socket until its timeout: say at once what is wrong (OVS may yet start).
  if (!(await databaseExists(ovs)))
    throw new CniError(
      CniErrorCode.TRY_AGAIN_LATER,
      `Neutron bound the port as "ovs", but there is no Open vSwitch database at ${ovs.database}: is OVS running on ` +
        `this node (ovs.database in raven-cni's configuration)?`,
    );
  let out: string;
  try {
    out = await vsctl(ovs, ['--bare', 'get', 'Bridge', bridge, 'datapath_type'], signal);
  } catch (err) {
    if (err instanceof CniError && /no row/.test(err.message))
      throw new CniError(
        CniErrorCode.INVALID_CONFIG,
        `Open vSwitch (${ovs.database}) has no bridge "${bridge}": set ovs.bridge in raven-cni's configuration`,
      );
    throw err;
  }
  return out.trim();
}

async function txChecksumOff(sandbox: Sandbox, signal: AbortSignal): Promise<void> {
  try {
    await run('nsenter', [`--net=${sandbox.netns}`, 'ethtool', '-K', sandbox.ifName, 'tx', 'off'], { signal });
  } catch (err) {
    throw new CniError(
      CniErrorCode.IO_FAILURE,
      `turning TX checksum offload off on ${sandbox.ifName} (needed on a userspace OVS datapath; is ethtool ` +
        `installed?): ${errorMessage(err)}`,
    );
  }
}

/**
 * Removes the OVS ports this sandbox's ADD made (found by their container id, so a newer sandbox of the same port is
 * left alone) and their veths. Needs no API: a node without OVS (no database socket, no ovs-vsctl) has none.
 * Idempotent.
 */
export async function unplugOvs(ovs: OvsNode, containerId: string, signal: AbortSignal): Promise<void> {
  if (!(await databaseExists(ovs))) return;
  let names: string[];
  try {
    const out = await vsctl(
      ovs,
      ['--bare', '--columns=name', 'find', 'Interface', `external_ids:${CONTAINER_KEY}=${atom(containerId)}`],
      signal,
    );
    names = out
      .split('\n')
      .map((n) => n.trim())
      .filter((n) => n !== '');
  } catch (err) {
    if (err instanceof CniError && /could not run/.test(err.message)) return; // no ovs-vsctl on this node
    throw err;
  }
  for (const name of names) {
    await vsctl(ovs, ['--if-exists', 'del-port', name], signal);
    await deleteLink(name);
  }
}

/** For CHECK: the bridge the host end is a port of and the Neutron port it carries ('' each when it is none). */
export async function inspectOvsPort(tap: string, ovs: OvsNode, signal: AbortSignal) {
  const out = await vsctl(
    ovs,
    ['get', 'Interface', tap, 'external_ids:iface-id', '--', 'port-to-br', tap],
    signal,
  ).catch(() => '');
  const [ifaceId = '', bridge = ''] = out.split('\n').map((l) => l.trim().replace(/^"|"$/g, ''));
  return { ifaceId, bridge };
}
