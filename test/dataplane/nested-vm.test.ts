/**
 * Nested pods in a real VM (docs/ovn.md, "A real VM"): on the OVN rig, a qemu VM whose NIC is a Neutron trunk's
 * parent port, plugged into the rig's integration bridge; a subport (VLAN 101) on a pod network; inside the VM the
 * nested pod is a network namespace holding the VLAN sub-interface `eth0.101` with the subport's MAC, IP and MTU, as a
 * nested CNI makes it. Real packets between it and bare pods (namespaces on the host, plugged into the bridge as the
 * rig's pods are): on its own network, through the rig's router, and a security group rule's removal blocking it.
 * Run by `npm run test:nested-vm` (root; it builds the image and starts the rig when missing); skipped otherwise.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { after, before, describe, it } from '../support/node-test.ts';
import { netnsNames, pings, readRig, rootDevices, type Rig } from '../support/dataplane.ts';
import { startVm, vmSkipReason, type Vm } from '../support/vm.ts';
import { waitFor } from '../support/wait.ts';

const sh = promisify(execFile);
const RIG_ENV = process.env.RAVEN_DATAPLANE_ENV;
// not part of test:dataplane, which runs every file here: a VM boot under software emulation costs minutes
const skip =
  (process.env.RAVEN_NESTED_VM !== '1' && 'runs under npm run test:nested-vm only (RAVEN_NESTED_VM=1)') ||
  (!RIG_ENV && 'needs the OVN dataplane rig (npm run test:nested-vm)') ||
  (!/^RAVEN_DATAPLANE_BACKEND=ovn$/m.test(readEnvFile(RIG_ENV)) && 'needs the OVN rig (trunks), not linuxbridge') ||
  vmSkipReason();
const VLAN = 101;
/** Packets in a VM under software emulation: its first ARP and flows take a few seconds. */
const PACKETS = { timeoutMs: 60_000, intervalMs: 500 };

function readEnvFile(file: string | undefined): string {
  try {
    return file ? readFileSync(file, 'utf8') : '';
  } catch {
    return '';
  }
}

/** Neutron's API, noauth (admin: no project header), as the rig serves it. */
function neutronApi(url: string) {
  return async <T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${url}/v2.0/${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return (text ? JSON.parse(text) : {}) as T;
  };
}

interface Port {
  id: string;
  mac_address: string;
  fixed_ips: { ip_address: string; subnet_id: string }[];
}

describe('a nested pod in a real VM, on a trunk subport (OVN)', { skip, timeout: 900_000 }, () => {
  const tag = `nvm-${randomBytes(3).toString('hex')}`;
  let rig: Rig;
  let neutron: ReturnType<typeof neutronApi>;
  let vm: Vm | undefined;
  const created: { kind: string; id: string }[] = [];
  const responders: ChildProcess[] = [];
  const netns: string[] = [];
  const ovsIfaces: string[] = [];
  let tcpRule = '';
  let booting: Promise<Vm> | undefined;
  /** the nested pod's, and two bare pods': one on the nested pod's network, one behind the router */
  let nested: Port;
  let bareL2: Port;
  let bareRouted: Port;
  const ip = (p: Port) => p.fixed_ips[0]!.ip_address;
  const vsctl = (...args: string[]) =>
    sh('ovs-vsctl', [`--db=${rig.ovs!.database}`, '--timeout=10', ...args], { timeout: 15_000 });

  async function make<T extends object>(kind: string, body: T): Promise<Record<string, unknown> & { id: string }> {
    const plural = `${kind.replace('_', '-')}s`;
    const answer = await neutron<Record<string, Record<string, unknown> & { id: string }>>('POST', plural, {
      [kind]: body,
    });
    const made = answer[kind]!;
    created.push({ kind: plural, id: made.id });
    return made;
  }

  /** `device` up and on the rig's bridge as `port`: OVN binds the port to the chassis by `iface-id`. */
  async function plug(device: string, port: Port): Promise<void> {
    await sh('ip', ['link', 'set', device, 'up']);
    ovsIfaces.push(device);
    await vsctl(
      'add-port',
      rig.ovs!.bridge,
      device,
      '--',
      'set',
      'Interface',
      device,
      `external_ids:iface-id=${port.id}`,
      `external_ids:attached-mac=${port.mac_address}`,
      'external_ids:iface-status=active',
    );
  }

  /** A bare pod: a namespace with a veth into the bridge, bound to `port` as the rig's pods are; a TCP responder. */
  async function plugBarePod(port: Port, gateway: string, name: string): Promise<void> {
    const ns = `${rig.netnsPrefix}${tag}-${name}`;
    const host = `${rig.interfacePrefix}${port.id.slice(0, 11)}`;
    netns.push(ns);
    await sh('ip', ['netns', 'add', ns]);
    await sh('ip', ['link', 'add', host, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns]);
    const inNs = (...c: string[]) => sh('ip', ['netns', 'exec', ns, ...c]);
    await inNs('ip', 'link', 'set', 'eth0', 'address', port.mac_address, 'mtu', '1442', 'up');
    await inNs('ip', 'addr', 'add', `${ip(port)}/24`, 'dev', 'eth0');
    await inNs('ip', 'link', 'set', 'lo', 'up');
    await inNs('ip', 'route', 'add', 'default', 'via', gateway);
    // the userspace datapath never completes a checksum left to the "hardware" (docs/ovn.md)
    await inNs('ethtool', '-K', 'eth0', 'tx', 'off');
    await plug(host, port);
    const responder = spawn(
      'ip',
      ['netns', 'exec', ns, 'socat', 'TCP-LISTEN:8080,fork,reuseaddr', `SYSTEM:echo ${name}`],
      {
        stdio: 'ignore',
      },
    );
    responders.push(responder);
  }

  /** TCP from the nested pod: what the responder at `address` says, or '' when nothing answers within 3 s. */
  async function nestedTcp(address: string): Promise<string> {
    const { output, code } = await vm!.run(
      `ip netns exec pod socat -T3 - TCP:${address}:8080,connect-timeout=3 </dev/null`,
      15_000,
    );
    return code === 0 ? output.trim() : '';
  }
  const nestedPings = async (address: string) =>
    (await vm!.run(`ip netns exec pod ping -n -q -c 1 -W 2 ${address}`, 15_000)).code === 0;
  /** The nested pod pings `port`'s address (once the path is up), then its TCP responder answers with `name`. */
  async function nestedReaches(port: Port, name: string): Promise<void> {
    await waitFor(`nested → ${name} (${ip(port)}) ping`, () => nestedPings(ip(port)), PACKETS);
    assert.equal(await nestedTcp(ip(port)), name);
  }

  before(async () => {
    rig = (await readRig())!;
    neutron = neutronApi(rig.neutronUrl);
    const sg = await make('security_group', { name: `${tag}-pods` });
    // ICMP and TCP 8080 in; the TCP rule is the one the last test removes
    for (const protocol of ['icmp', 'tcp'] as const) {
      const { security_group_rule: rule } = await neutron<{ security_group_rule: { id: string } }>(
        'POST',
        'security-group-rules',
        {
          security_group_rule: {
            security_group_id: sg.id,
            direction: 'ingress',
            ethertype: 'IPv4',
            protocol,
            ...(protocol === 'tcp' ? { port_range_min: 8080, port_range_max: 8080 } : {}),
          },
        },
      );
      if (protocol === 'tcp') tcpRule = rule.id;
    }
    const network = async (name: string, cidr: string) => {
      const net = await make('network', { name: `${tag}-${name}` });
      const subnet = await make('subnet', { network_id: net.id, ip_version: 4, cidr, name: `${tag}-${name}` });
      return { net: net.id, subnet: subnet.id, gateway: String(subnet.gateway_ip) };
    };
    const nodes = await network('nodes', '10.251.0.0/24');
    const pods = await network('pods', '10.251.1.0/24');
    const other = await network('other', '10.251.2.0/24');
    const router = await make('router', { name: `${tag}-router` });
    for (const s of [pods.subnet, other.subnet])
      await neutron('PUT', `routers/${router.id}/add_router_interface`, { subnet_id: s });

    const port = async (name: string, net: string, extra: object = {}) =>
      (await make('port', {
        name: `${tag}-${name}`,
        network_id: net,
        security_groups: [sg.id],
        ...extra,
      })) as unknown as Port;
    const vmPort = await port('vm', nodes.net, { 'binding:host_id': rig.host, device_owner: 'compute:nova' });
    const trunk = await make('trunk', { name: `${tag}-trunk`, port_id: vmPort.id });
    // as a nested CNI's controller makes it: no host, no owner (the trunk driver sets both)
    nested = await port('nested', pods.net);
    await neutron('PUT', `trunks/${trunk.id}/add_subports`, {
      sub_ports: [{ port_id: nested.id, segmentation_type: 'vlan', segmentation_id: VLAN }],
    });
    bareL2 = await port('bare-l2', pods.net, { 'binding:host_id': rig.host });
    bareRouted = await port('bare-routed', other.net, { 'binding:host_id': rig.host });
    await plugBarePod(bareL2, pods.gateway, 'bare-l2');
    await plugBarePod(bareRouted, other.gateway, 'bare-routed');

    // the VM: qemu makes the tap, we plug it into the bridge as the trunk parent, as Nova's VIF driver would
    const tap = `${rig.interfacePrefix}${vmPort.id.slice(0, 11)}`;
    booting = startVm({ tap, mac: vmPort.mac_address });
    await waitFor(`tap ${tap}`, async () => (await rootDevices([tap])).length > 0, { timeoutMs: 30_000 });
    await plug(tap, vmPort);
    const t0 = Date.now();
    vm = await booting;
    console.log(`# VM up (agent answers) ${((Date.now() - t0) / 1000).toFixed(1)} s after the tap appeared`);

    // what a nested CNI does: the VLAN sub-interface on the NIC, moved into the pod's namespace with the subport's
    // MAC, IP and MTU, a default route through the pod network's gateway, a responder
    await vm.must(`set -e
      ip link set eth0 mtu 1442 up
      ip netns add pod
      ip link add link eth0 name eth0.${VLAN} type vlan id ${VLAN}
      ip link set eth0.${VLAN} netns pod
      ip -n pod link set eth0.${VLAN} address ${nested.mac_address} mtu 1442 up
      ip -n pod link set lo up
      ip -n pod addr add ${ip(nested)}/24 dev eth0.${VLAN}
      ip -n pod route add default via ${pods.gateway}
      setsid ip netns exec pod socat TCP-LISTEN:8080,fork,reuseaddr 'SYSTEM:echo nested' </dev/null >/dev/null 2>&1 &`);
  });

  after(async () => {
    // a VM still booting when \`before\` failed is closed too
    vm ??= await booting?.catch(() => undefined);
    if (vm) {
      const { rss, peak } = await vm.memoryMb();
      console.log(`# qemu memory: RSS ${rss} MB, peak ${peak} MB`);
      await vm.close();
    }
    for (const r of responders) r.kill('SIGKILL');
    for (const i of ovsIfaces) await vsctl('--if-exists', 'del-port', rig.ovs!.bridge, i).catch(() => undefined);
    for (const ns of netns) await sh('ip', ['netns', 'del', ns]).catch(() => undefined);
    for (const i of ovsIfaces) await sh('ip', ['link', 'del', i]).catch(() => undefined);
    // what holds other objects goes first: the trunks' subports, the routers' interfaces; then newest first
    for (const { kind, id } of created) {
      if (kind === 'trunks') {
        const { trunk } = await neutron<{ trunk: { sub_ports: object[] } }>('GET', `trunks/${id}`);
        if (trunk.sub_ports.length)
          await neutron('PUT', `trunks/${id}/remove_subports`, { sub_ports: trunk.sub_ports });
      }
      if (kind === 'routers') {
        const { ports } = await neutron<{ ports: Port[] }>('GET', `ports?device_id=${id}`);
        for (const p of ports) await neutron('PUT', `routers/${id}/remove_router_interface`, { port_id: p.id });
      }
    }
    for (const { kind, id } of created.reverse()) await neutron('DELETE', `${kind}/${id}`);
    const left = (await netnsNames(`${rig.netnsPrefix}${tag}`)).length;
    assert.equal(left, 0, 'no namespace of this test is left');
  });

  it('the guest kernel has 802.1Q: the nested pod holds a VLAN sub-interface of the VM NIC', async () => {
    const link = await vm!.must(`ip -n pod -d link show eth0.${VLAN}`);
    assert.match(link, new RegExp(`vlan protocol 802\\.1Q id ${VLAN}`));
    assert.match(link, new RegExp(nested.mac_address));
  });

  it('the nested pod reaches a bare pod on its own network (ping, TCP)', async () => {
    await nestedReaches(bareL2, 'bare-l2');
  });

  it('a bare pod reaches the nested pod (ping, TCP into the VM)', async () => {
    const ns = `${rig.netnsPrefix}${tag}-bare-l2`;
    await waitFor(`bare → nested ${ip(nested)} ping`, () => pings(ns, ip(nested), 2), PACKETS);
    const { stdout } = await sh(
      'ip',
      ['netns', 'exec', ns, 'socat', '-T3', '-', `TCP:${ip(nested)}:8080,connect-timeout=3`],
      {
        timeout: 10_000,
      },
    );
    assert.equal(stdout.trim(), 'nested');
  });

  it("the nested pod reaches a bare pod on another network, through the rig's router", async () => {
    await nestedReaches(bareRouted, 'bare-routed');
  });

  it("removing the security group's TCP rule blocks the nested pod's TCP, ping still passes", async () => {
    await nestedReaches(bareL2, 'bare-l2');
    await neutron('DELETE', `security-group-rules/${tcpRule}`);
    await waitFor(`nested → bare TCP blocked`, async () => (await nestedTcp(ip(bareL2))) === '', PACKETS);
    assert.ok(await nestedPings(ip(bareL2)), 'ICMP is still allowed: the path is up, only TCP 8080 is denied');
  });
});
