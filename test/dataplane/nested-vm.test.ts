/**
 * Nested pods in a real VM (docs/ovn.md, "A real VM"): on the OVN rig, a qemu VM whose NIC is a Neutron trunk's
 * parent port, plugged into the rig's integration bridge; subports (VLANs 101–103) on a pod network; and raven-cni
 * itself running INSIDE the VM in nested mode (Node.js and the bundled plugin from a read-only 9p share), reaching the
 * test's API server and the rig's Neutron on the host's loopback through qemu's user-mode network. The pods' VIF
 * annotations are written as Raven's controller writes them (one verified against Neutron, one signed with a test key);
 * raven-cni's ADD makes the VLAN sub-interface with the subport's MAC, IP and MTU in the pod's namespace. Real packets
 * between it and bare pods (namespaces on the host, plugged into the bridge as the rig's pods are): on its own network,
 * through the rig's router, and a security group rule's removal blocking it; CHECK, DEL, and forged annotations
 * refused. Then Raven's controller itself: a pod's subport on the cold path; with warm pools, NetworkPolicies and
 * Services on, a warm subport (pod → first packet), a policy isolating the nested pod, a freed subport taken by a later
 * pod, a Service's VIP reached from a nested pod, and a second VM whose nested pod reaches the first VM's. Run by
 * `npm run test:nested-vm` (root; it builds the image and starts the rig when missing); skipped otherwise.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { copyFile, link, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { after, before, describe, it } from '../support/node-test.ts';
import {
  netnsNames,
  neutronAdmin,
  neutronScratch,
  pings,
  plugIntoBridge,
  purgeLoadBalancers,
  readRig,
  recentLogs,
  registerVmNode,
  rootDevices,
  runController,
  type Rig,
} from '../support/dataplane.ts';
import { mountShare, startVm, vmSkipReason, type Vm } from '../support/vm.ts';
import { waitFor } from '../support/wait.ts';
import { startTestServer, testConnection, type TestServer } from '../support/server.ts';
import { bundleRavenCni } from '../../src/daemon/cni-bundle.ts';
import { formatVif, parseVif, signVif, VIF_ANNOTATION, type Pod, type Vif } from '../../src/kube/api/index.ts';
import { KubeClient, resources } from '../../src/kube/client/index.ts';
import { loadCloudConfig, NeutronClient, OctaviaClient, OpenStackSession } from '../../src/openstack/index.ts';
import { purgeCluster } from '../support/neutron-cluster.ts';

const sh = promisify(execFile);
const RIG_ENV = process.env.RAVEN_DATAPLANE_ENV;
// not part of test:dataplane, which runs every file here: a VM boot under software emulation costs minutes
const skip =
  (process.env.RAVEN_NESTED_VM !== '1' && 'runs under npm run test:nested-vm only (RAVEN_NESTED_VM=1)') ||
  (!RIG_ENV && 'needs the OVN dataplane rig (npm run test:nested-vm)') ||
  (!/^RAVEN_DATAPLANE_BACKEND=ovn$/m.test(readEnvFile(RIG_ENV)) && 'needs the OVN rig (trunks), not linuxbridge') ||
  vmSkipReason();
/** Whether the rig runs Octavia (its OVN provider): the Service case needs it. */
const OCTAVIA = /^RAVEN_DATAPLANE_OCTAVIA_URL=./m.test(readEnvFile(RIG_ENV));
const VLAN = 101;
/** The Kubernetes node the VM is, and where raven-cni finds its files inside it. */
const VM_NODE = 'nvm-vm-1';
const GUEST_DIR = '/run/raven';
/** Packets in a VM under software emulation: its first ARP and flows take a few seconds. */
const PACKETS = { timeoutMs: 60_000, intervalMs: 500 };

function readEnvFile(file: string | undefined): string {
  try {
    return file ? readFileSync(file, 'utf8') : '';
  } catch {
    return '';
  }
}

interface Port {
  id: string;
  mac_address: string;
  network_id: string;
  fixed_ips: { ip_address: string; subnet_id: string }[];
}

/** The timings of a raven-cni ADD's log line (docs/cni.md, "The commands"). */
const addTimings = (run: CniRun) =>
  run.log.find((l) => l.msg === 'ADD done')?.timings as { verifiedBy?: string; totalMs?: number } | undefined;

/** One raven-cni call in the VM: its exit code, stdout (the result or the error), and its log lines (stderr). */
interface CniRun {
  code: number;
  stdout: string;
  log: Record<string, unknown>[];
  ms: number;
}

describe('a nested pod in a real VM, on a trunk subport (OVN)', { skip, timeout: 900_000 }, () => {
  const tag = `nvm-${randomBytes(3).toString('hex')}`;
  let rig: Rig;
  let neutron: ReturnType<typeof neutronAdmin>;
  let vm: Vm | undefined;
  let scratch: ReturnType<typeof neutronScratch> | undefined;
  const responders: ChildProcess[] = [];
  const netns: string[] = [];
  const ovsIfaces: string[] = [];
  let tcpRule = '';
  let booting: Promise<Vm> | undefined;
  /** the second VM (another node), and what it is made with: the nodes' network, the pods' group, the forwards */
  let vm2: Vm | undefined;
  let nodesNet = '';
  let podsGroup = '';
  let forwards: number[] = [];
  /** the nested pod's, and two bare pods': one on the nested pod's network, one behind the router */
  let nested: Port;
  let bareL2: Port;
  let bareRouted: Port;
  /** a second nested pod's (its VIF signed), and a third pod's that forges its annotation */
  let signedPort: Port;
  let forgerPort: Port;
  /** the test's API server (the VM's Kubernetes), and the pods raven-cni plugs */
  let server: TestServer | undefined;
  let kube: KubeClient | undefined;
  const kpods: Record<'unsigned' | 'signed' | 'forger', Pod> = {} as never;
  /** what the controller writes: each pod's VIF */
  const vifs: Partial<Record<keyof typeof kpods, Vif>> = {};
  let share: string | undefined;
  let unsignedAdd: CniRun;
  const serverId = randomUUID();
  const vifKey = randomBytes(32);
  /** what Raven's controller needs of the test's cloud, and its cluster id (for the clean-up) */
  let podSubnetId = '';
  let routerId = '';
  let trunkId = '';
  const clusterId = `nvm${randomBytes(3).toString('hex')}`;
  let ravenCloud: { session: OpenStackSession; neutron: NeutronClient } | undefined;
  const ip = (p: Port) => p.fixed_ips[0]!.ip_address;
  const vsctl = (...args: string[]) =>
    sh('ovs-vsctl', [`--db=${rig.ovs!.database}`, '--timeout=10', ...args], { timeout: 15_000 });

  const make = (kind: string, body: object) => scratch!.make(kind, body);

  /** `device` up and on the rig's bridge as `port` (removed from it afterwards). */
  async function plug(device: string, port: Port): Promise<void> {
    ovsIfaces.push(device);
    await plugIntoBridge(rig, device, port);
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

  /**
   * raven-cni in the VM, as a runtime calls it: `command` for `pod` in the guest's namespace `netns`, its configuration
   * on stdin (nested mode, this VM's server id, the credentials from the share; with `extra` keys).
   */
  async function cni(
    command: 'ADD' | 'CHECK' | 'DEL',
    pod: Pod,
    netns: string,
    extra: Record<string, unknown> = {},
    guest: Vm = vm!,
  ): Promise<CniRun> {
    const conf = {
      cniVersion: '1.0.0',
      name: 'raven',
      type: 'raven-cni',
      kubeconfig: `${GUEST_DIR}/kubeconfig`,
      cloudsYaml: `${GUEST_DIR}/clouds.yaml`,
      cloud: rig.cloud,
      nodeName: VM_NODE,
      mode: 'nested',
      serverId,
      vifTimeoutSeconds: 20,
      ...extra,
    };
    const env = [
      `CNI_COMMAND=${command}`,
      `CNI_CONTAINERID=c-${netns}`,
      `CNI_NETNS=/run/netns/${netns}`,
      'CNI_IFNAME=eth0',
      `CNI_ARGS='K8S_POD_NAMESPACE=default;K8S_POD_NAME=${pod.metadata.name};K8S_POD_UID=${pod.metadata.uid}'`,
      `PATH=${GUEST_DIR}:$PATH`,
    ].join(' ');
    const t0 = Date.now();
    const { output, code } = await guest.run(
      `cat >/tmp/conf.json <<'EOF'\n${JSON.stringify(conf)}\nEOF\n` +
        `${env} raven-cni </tmp/conf.json >/tmp/cni.out 2>/tmp/cni.err; rc=$?\n` +
        'cat /tmp/cni.out; echo; echo ---raven-cni-log---; cat /tmp/cni.err; exit $rc',
      180_000,
    );
    const [stdout = '', log = ''] = output.split('\n---raven-cni-log---\n');
    const lines = log.split('\n').flatMap((l) => {
      try {
        return [JSON.parse(l) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
    return { code, stdout: stdout.trim(), log: lines, ms: Date.now() - t0 };
  }

  /** A pod on the VM's node (or `node`), in the test's API server, as the scheduler left it. */
  async function createPod(name: string, labels?: Record<string, string>, node = VM_NODE): Promise<Pod> {
    return kube!.create(resources.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `${tag}-${name}`, namespace: 'default', ...(labels ? { labels } : {}) },
      spec: { nodeName: node, containers: [{ name: 'app', image: 'app' }] },
    });
  }

  /** The annotation Raven writes on `pod` (a merge patch, as Raven does). */
  async function annotate(pod: Pod, vif: Vif): Promise<void> {
    await kube!.patch(
      resources.pods,
      pod.metadata.name ?? '',
      'default',
      { metadata: { annotations: { [VIF_ANNOTATION]: formatVif(vif) } } },
      'merge',
    );
  }

  before(async () => {
    rig = (await readRig())!;
    neutron = neutronAdmin(rig.neutronUrl);
    scratch = neutronScratch(neutron);
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
    nodesNet = nodes.net;
    podsGroup = sg.id;
    const pods = await network('pods', '10.251.1.0/24');
    const other = await network('other', '10.251.2.0/24');
    const router = await make('router', { name: `${tag}-router` });
    routerId = router.id;
    podSubnetId = pods.subnet;
    for (const s of [pods.subnet, other.subnet])
      await neutron('PUT', `routers/${router.id}/add_router_interface`, { subnet_id: s });

    const port = async (name: string, net: string, extra: object = {}) =>
      (await make('port', {
        name: `${tag}-${name}`,
        network_id: net,
        security_groups: [sg.id],
        ...extra,
      })) as unknown as Port;
    // the VM's own port: Nova's, its device_id the server's id (raven-cni's serverId)
    const vmPort = await port('vm', nodes.net, {
      'binding:host_id': rig.host,
      device_owner: 'compute:nova',
      device_id: serverId,
    });
    const trunk = await make('trunk', { name: `${tag}-trunk`, port_id: vmPort.id });
    trunkId = trunk.id;
    // as Raven's controller makes them: no host, no owner, no device (the trunk driver sets the first two, and a port
    // with a device cannot join a trunk); the pod's claim on device_id comes after
    nested = await port('nested', pods.net);
    signedPort = await port('signed', pods.net);
    forgerPort = await port('forger', pods.net);
    const subports = [nested, signedPort, forgerPort];
    await neutron('PUT', `trunks/${trunk.id}/add_subports`, {
      sub_ports: subports.map((p, i) => ({ port_id: p.id, segmentation_type: 'vlan', segmentation_id: VLAN + i })),
    });

    // the VM's Kubernetes: the test's API server; the pods, their claims, their VIFs as the controller writes them
    server = await startTestServer();
    kube = new KubeClient({ connection: testConnection(server) });
    const { network: podNet } = await neutron<{ network: { mtu: number } }>('GET', `networks/${pods.net}`);
    const vifOf = (pod: Pod, p: Port, vlan: number): Vif => ({
      version: 1,
      podUid: pod.metadata.uid ?? '',
      portId: p.id,
      networkId: p.network_id,
      subnetId: pods.subnet,
      mac: p.mac_address,
      ips: [{ address: ip(p), prefixLength: 24, gateway: pods.gateway }],
      mtu: podNet.mtu,
      active: false,
      nested: { trunkId: trunk.id, vlan, parentMac: vmPort.mac_address },
    });
    for (const [name, p, i] of [
      ['unsigned', nested, 0],
      ['signed', signedPort, 1],
      ['forger', forgerPort, 2],
    ] as const) {
      const pod = (kpods[name] = await createPod(name));
      await neutron('PUT', `ports/${p.id}`, { port: { device_id: pod.metadata.uid } });
      vifs[name] = vifOf(pod, p, VLAN + i);
    }
    await annotate(kpods.unsigned, vifs.unsigned!);
    await annotate(kpods.signed, signVif(vifs.signed!, vifKey, { node: VM_NODE, plug: 'vlan', epoch: 0 }));

    // what raven-cni needs in the VM: Node.js, the bundled plugin, the node's credentials and the VIF key
    share = await mkdtemp(join(tmpdir(), 'raven-nvm-'));
    await link(process.execPath, join(share, 'node')).catch(() => copyFile(process.execPath, join(share!, 'node')));
    await bundleRavenCni(share);
    await copyFile(server.kubeconfig, join(share, 'kubeconfig'));
    await copyFile(rig.cloudsYaml, join(share, 'clouds.yaml'));
    await writeFile(join(share, 'vif.key'), vifKey);
    forwards = [Number(new URL(server.url).port), Number(new URL(rig.neutronUrl).port)];
    bareL2 = await port('bare-l2', pods.net, { 'binding:host_id': rig.host });
    bareRouted = await port('bare-routed', other.net, { 'binding:host_id': rig.host });
    await plugBarePod(bareL2, pods.gateway, 'bare-l2');
    await plugBarePod(bareRouted, other.gateway, 'bare-routed');

    // the VM: qemu makes the tap, we plug it into the bridge as the trunk parent, as Nova's VIF driver would
    const tap = `${rig.interfacePrefix}${vmPort.id.slice(0, 11)}`;
    booting = startVm({ tap, mac: vmPort.mac_address, share, forwards });
    await waitFor(`tap ${tap}`, async () => (await rootDevices([tap])).length > 0, { timeoutMs: 30_000 });
    await plug(tap, vmPort);
    const t0 = Date.now();
    vm = await booting;
    console.log(`# VM up (agent answers) ${((Date.now() - t0) / 1000).toFixed(1)} s after the tap appeared`);

    // the node's own set-up: the share, its loopback forwarders, the NIC up at the pod network's MTU
    await vm.must(`${mountShare(GUEST_DIR, forwards)}\nip link set eth0 mtu 1442 up\nip netns add pod`);
    // the runtime's ADD: raven-cni in the VM checks the unsigned VIF against Neutron and plugs the subport
    unsignedAdd = await cni('ADD', kpods.unsigned, 'pod');
    console.log(
      `# raven-cni ADD in the VM (unsigned, Neutron): ${(unsignedAdd.ms / 1000).toFixed(1)} s wall, ` +
        `plugin ${JSON.stringify(addTimings(unsignedAdd))}, host load ${(await readFile('/proc/loadavg', 'utf8')).trim()}`,
    );
    assert.equal(unsignedAdd.code, 0, `${unsignedAdd.stdout}\n${JSON.stringify(unsignedAdd.log)}`);
    await vm.must(
      "setsid ip netns exec pod socat TCP-LISTEN:8080,fork,reuseaddr 'SYSTEM:echo nested' </dev/null >/dev/null 2>&1 &",
    );
  });

  after(async () => {
    // a VM still booting when \`before\` failed is closed too
    vm ??= await booting?.catch(() => undefined);
    if (vm) {
      const { rss, peak } = await vm.memoryMb();
      console.log(`# qemu memory: RSS ${rss} MB, peak ${peak} MB`);
      await vm.close();
    }
    await vm2?.close();
    await kube?.close();
    await server?.stop();
    if (share) await rm(share, { recursive: true, force: true });
    for (const r of responders) r.kill('SIGKILL');
    for (const i of ovsIfaces) await vsctl('--if-exists', 'del-port', rig.ovs!.bridge, i).catch(() => undefined);
    for (const ns of netns) await sh('ip', ['netns', 'del', ns]).catch(() => undefined);
    for (const i of ovsIfaces) await sh('ip', ['link', 'del', i]).catch(() => undefined);
    // what holds other objects goes first: the trunks' subports, the routers' interfaces; then newest first
    await scratch?.release();
    // what Raven's controller made and left (its service network, its pools' ports, now off the trunk), before the
    // subnets they are on
    if (ravenCloud) {
      if (OCTAVIA) await purgeLoadBalancers(new OctaviaClient(ravenCloud.session), clusterId);
      await purgeCluster(ravenCloud.neutron, clusterId);
      await ravenCloud.session.close();
    }
    await scratch?.deleteAll();
    const left = (await netnsNames(`${rig.netnsPrefix}${tag}`)).length;
    assert.equal(left, 0, 'no namespace of this test is left');
  });

  it("raven-cni's ADD in the VM, checked against Neutron, gave the nested pod a VLAN sub-interface of the NIC", async () => {
    assert.equal(addTimings(unsignedAdd)?.verifiedBy, 'neutron');
    const result = JSON.parse(unsignedAdd.stdout) as { interfaces: { name: string; mac: string }[]; ips: object[] };
    assert.deepEqual(result.interfaces[1], { name: 'eth0', mac: nested.mac_address, sandbox: '/run/netns/pod' });
    const link = await vm!.must('ip -n pod -d link show eth0');
    assert.match(link, new RegExp(`vlan protocol 802\\.1Q id ${VLAN}`));
    assert.match(link, new RegExp(`link/ether ${nested.mac_address}`));
    assert.match(link, /mtu 1442/);
    assert.match(await vm!.must('ip -n pod -4 addr show dev eth0'), new RegExp(`inet ${ip(nested)}/24`));
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

  it('CHECK in the VM finds the nested pod as ADD left it', async () => {
    const prevResult = JSON.parse(unsignedAdd.stdout) as object;
    const check = await cni('CHECK', kpods.unsigned, 'pod', { prevResult });
    assert.equal(check.code, 0, check.stdout);
  });

  it('a VIF Raven signed for this VM is plugged on its signature (no Neutron read); DEL removes it, twice', async () => {
    await vm!.must('ip netns add pod-signed');
    const add = await cni('ADD', kpods.signed, 'pod-signed', { vifKeyFile: `${GUEST_DIR}/vif.key` });
    console.log(
      `# raven-cni ADD in the VM (signed): ${(add.ms / 1000).toFixed(1)} s wall, ` +
        `plugin ${JSON.stringify(addTimings(add))}, host load ${(await readFile('/proc/loadavg', 'utf8')).trim()}`,
    );
    assert.equal(add.code, 0, `${add.stdout}\n${JSON.stringify(add.log)}`);
    assert.equal(addTimings(add)?.verifiedBy, 'signature');
    assert.match(await vm!.must('ip -n pod-signed -d link show eth0'), new RegExp(`802\\.1Q id ${VLAN + 1}`));
    const signedPings = async () =>
      (await vm!.run(`ip netns exec pod-signed ping -n -q -c 1 -W 2 ${ip(bareL2)}`, 15_000)).code === 0;
    await waitFor(`signed nested → bare-l2 ping`, signedPings, PACKETS);
    for (const round of [1, 2]) {
      const del = await cni('DEL', kpods.signed, 'pod-signed');
      assert.equal(del.code, 0, `DEL ${round}: ${del.stdout}`);
    }
    const gone = await vm!.run('ip -n pod-signed link show eth0');
    assert.notEqual(gone.code, 0, 'the sub-interface is gone from the pod');
    assert.doesNotMatch(await vm!.must('ip -d link show'), new RegExp(`802\\.1Q id ${VLAN + 1}`));
  });

  it("refuses forged annotations in the VM: another pod's subport, another VLAN", async () => {
    await vm!.must('ip netns add pod-forger');
    const forger = kpods.forger;
    const uid = forger.metadata.uid ?? '';
    const cases = [
      // the unsigned pod's whole VIF, with the forger's uid so it looks current
      { vif: { ...vifs.unsigned!, podUid: uid }, msg: new RegExp(`port ${nested.id} belongs to device`) },
      // its own subport, but the unsigned pod's VLAN: its frames would be the other pod's
      {
        vif: { ...vifs.forger!, nested: { ...vifs.forger!.nested!, vlan: VLAN } },
        msg: new RegExp(`at vlan ${VLAN + 2}, the annotation says VLAN ${VLAN}`),
      },
    ];
    for (const c of cases) {
      await annotate(forger, c.vif);
      const add = await cni('ADD', forger, 'pod-forger');
      assert.equal(add.code, 1, add.stdout);
      const error = JSON.parse(add.stdout) as { code: number; msg: string };
      assert.equal(error.code, 100);
      assert.match(error.msg, c.msg);
      assert.doesNotMatch(await vm!.must('ip -n pod-forger link show'), /eth0/, 'nothing was plugged');
    }
  });

  /**
   * Raven's controller for this VM's cluster, in nested mode with the trunk the VM's template made: `pools` static
   * sizes (undefined: pools off) and NetworkPolicies on or off. Stopped by the returned function.
   */
  async function startController(pools: { min: number; max: number; batch: number } | undefined, policies: boolean) {
    if (!ravenCloud) {
      const cloud = loadCloudConfig({ cloud: rig.cloud, env: { OS_CLIENT_CONFIG_FILE: rig.cloudsYaml } });
      const session = new OpenStackSession({ cloud, timeoutMs: 120_000 });
      ravenCloud = { session, neutron: new NeutronClient(session) };
    }
    const settings = {
      clusterId,
      subnets: { strategy: 'shared', shared: { subnetId: podSubnetId } },
      serviceSubnet: { cidr: '10.96.0.0/12' },
      router: { id: routerId },
      translations: { services: policies && !!rig.octavia, networkPolicies: policies },
      ...(policies && rig.octavia ? { emulateKubeProxy: true, loadBalancer: { provider: rig.octavia.provider } } : {}),
      nested: { mode: 'existing' },
      portPools: pools ? { enabled: true, sizing: 'static', ...pools } : { enabled: false },
      leaderElection: { enabled: false },
      vif: { keyFile: join(share!, 'vif.key') },
      ops: { port: 0 },
      resyncPeriodSeconds: 0,
      logLevel: 'silent',
    };
    return runController(server!, ravenCloud.session, settings, (url) => (opsUrl = url));
  }

  /** The running controller's ops server (its `/metrics`). */
  let opsUrl = '';
  /** The controller's warm pools as its `/metrics` show them: free ports in the VM node's pools, pods served warm. */
  async function poolMetrics(): Promise<{ free: number; hits: number }> {
    const text = await (await fetch(`${opsUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    const free = [...text.matchAll(/^raven_port_pool_size\{([^}]*)\} (\d+)$/gm)]
      .filter(([, labels]) => labels!.includes(`node="${VM_NODE}"`))
      .reduce((sum, [, , n]) => sum + Number(n), 0);
    const hits = Number(/^raven_port_pool_hits_total (\d+)$/m.exec(text)?.[1] ?? 0);
    return { free, hits };
  }

  const vifOfPod = async (pod: Pod) =>
    parseVif(
      (await kube!.get<Pod>(resources.pods, pod.metadata.name ?? '', 'default')).metadata.annotations?.[VIF_ANNOTATION],
    );
  /** The nested VIF the controller wrote on `pod`. */
  const controllerVif = (pod: Pod, timeoutMs = 120_000) =>
    waitFor(
      `the controller’s VIF for ${pod.metadata.name}`,
      async () => (await vifOfPod(pod))?.nested && vifOfPod(pod),
      {
        timeoutMs,
        intervalMs: 20,
      },
    );
  /** The trunk's subports in Neutron: port id → VLAN id. */
  const trunkSubports = async () => {
    const { sub_ports: subPorts } = await neutron<{ sub_ports: { port_id: string; segmentation_id: number }[] }>(
      'GET',
      `trunks/${trunkId}/get_subports`,
    );
    return new Map(subPorts.map((p) => [p.port_id, p.segmentation_id]));
  };
  /** TCP from a bare pod's namespace: what the responder at `address` says, or '' when nothing answers within 3 s. */
  const bareTcp = (name: string, address: string) => bareTcpTo(name, address, 8080);
  async function bareTcpTo(name: string, address: string, port: number): Promise<string> {
    const ns = `${rig.netnsPrefix}${tag}-${name}`;
    return sh('ip', ['netns', 'exec', ns, 'socat', '-T3', '-', `TCP:${address}:${port},connect-timeout=3`], {
      timeout: 10_000,
    }).then(
      ({ stdout }) => stdout.trim(),
      () => '',
    );
  }
  /** A TCP responder in the guest's namespace `netns`, answering `name`. */
  const respond = (netns: string, name: string, guest: Vm = vm!) =>
    guest.must(
      `setsid ip netns exec ${netns} socat TCP-LISTEN:8080,fork,reuseaddr 'SYSTEM:echo ${name}' </dev/null >/dev/null 2>&1 &`,
    );

  it("Raven's controller gives a new pod on the VM node a subport (cold, pools off), and raven-cni in the VM plugs it on its signature", async () => {
    // The pods above had their subports made by hand: gone, so that Raven sees only the pod it wires.
    for (const pod of Object.values(kpods)) await kube!.delete(resources.pods, pod.metadata.name ?? '', 'default');
    // The Node as the cloud provider registers it, and Raven in nested mode with the trunk the VM's template made.
    await registerVmNode(kube!, VM_NODE, serverId);
    const stopController = await startController(undefined, false);
    try {
      const pod = await createPod('ctl');
      const vif = await controllerVif(pod);
      assert.equal(vif.nested!.trunkId, trunkId, 'a subport of the VM’s trunk');
      assert.equal(vif.signed?.plug, 'vlan');
      assert.equal((await trunkSubports()).get(vif.portId), vif.nested!.vlan, 'Neutron has it on the VIF’s VLAN id');
      assert.ok(![VLAN, VLAN + 1, VLAN + 2].includes(vif.nested!.vlan), 'a VLAN id no other subport has');

      await vm!.must('ip netns add pod-ctl');
      const add = await cni('ADD', pod, 'pod-ctl', { vifKeyFile: `${GUEST_DIR}/vif.key` });
      console.log(`# raven-cni ADD in the VM (controller's signed VIF): ${(add.ms / 1000).toFixed(1)} s wall`);
      assert.equal(add.code, 0, `${add.stdout}\n${JSON.stringify(add.log)}`);
      assert.equal(addTimings(add)?.verifiedBy, 'signature');
      assert.match(await vm!.must('ip -n pod-ctl -d link show eth0'), new RegExp(`802\\.1Q id ${vif.nested!.vlan}`));
      const ctlPings = async () =>
        (await vm!.run(`ip netns exec pod-ctl ping -n -q -c 1 -W 2 ${ip(bareL2)}`, 15_000)).code === 0;
      await waitFor('controller-made nested pod → bare-l2 ping', ctlPings, PACKETS);

      // The pod goes: the runtime's DEL, then Raven takes the subport off the trunk and deletes it.
      assert.equal((await cni('DEL', pod, 'pod-ctl')).code, 0);
      await vm!.must('ip netns del pod-ctl');
      await kube!.delete(resources.pods, pod.metadata.name ?? '', 'default');
      await waitFor(
        'the subport gone from the trunk and Neutron',
        async () => {
          const { ports } = await neutron<{ ports: object[] }>('GET', `ports?id=${vif.portId}`);
          return !(await trunkSubports()).has(vif.portId) && ports.length === 0;
        },
        { timeoutMs: 60_000 },
      );
    } finally {
      await stopController();
    }
  });

  describe("Raven's controller with warm subport pools and NetworkPolicies on", () => {
    let stopController: (() => Promise<void>) | undefined;
    /** the first pod's subport, freed when it goes and taken by a later pod */
    let first: { pod: Pod; vif: Vif } | undefined;
    /** the later pod that took it: plugged, answering `next` on TCP 8080, the Service's member */
    let member: { pod: Pod; vif: Vif } | undefined;
    const app = `${tag}-ctl`;

    before(async () => {
      stopController = await startController({ min: 1, max: 3, batch: 1 }, true);
    });
    after(async () => {
      await stopController?.();
    });

    it("the VM node's first pod takes the cold path and makes its pool: a free subport on the trunk follows", async () => {
      // Pools are made by demand (docs/pools.md): this node's, for this subnet and group set, by its first pod.
      const prime = await createPod('prime');
      const primeVif = await controllerVif(prime);
      const byHand = new Set([nested.id, signedPort.id, forgerPort.id, primeVif.portId]);
      const free = await waitFor(
        'a free subport of Raven’s pool on the trunk',
        async () => {
          const ravens = [...(await trunkSubports()).keys()].filter((id) => !byHand.has(id));
          return ravens.length > 0 && ravens;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      const { port } = await neutron<{ port: { device_id: string; tags: string[] } }>('GET', `ports/${free[0]}`);
      assert.equal(port.device_id, '', 'no pod has claimed it');
      assert.ok(port.tags.includes(`raven.cluster=${clusterId}`), `Raven's tags: ${port.tags.join(' ')}`);
      // in the pool once the refill has read it back (the trunk driver changed it): a pod may take it from then on
      await waitFor('the free subport in the VM node’s pool', async () => (await poolMetrics()).free >= 1, {
        timeoutMs: 60_000,
        intervalMs: 200,
      });
    });

    it('a new pod takes a warm subport: pod → VIF → raven-cni ADD in the VM → first packet', async () => {
      const onTrunk = await trunkSubports();
      const { hits } = await poolMetrics();
      const t0 = Date.now();
      const pod = await createPod('warm', { app });
      // the runtime calls raven-cni as soon as it makes the sandbox; raven-cni waits for the VIF
      await vm!.must('ip netns add pod-warm');
      const adding = cni('ADD', pod, 'pod-warm', { vifKeyFile: `${GUEST_DIR}/vif.key` });
      const vif = await controllerVif(pod);
      const vifMs = Date.now() - t0;
      const add = await adding;
      const addMs = Date.now() - t0;
      assert.equal(add.code, 0, `${add.stdout}\n${JSON.stringify(add.log)}`);
      // the first answered ping, tried back to back in the guest (each waits 1 s at most)
      const probe = await vm!.run(
        `for i in $(seq 1 120); do ip netns exec pod-warm ping -n -q -c 1 -W 1 ${ip(bareL2)} >/dev/null && exit 0; done; exit 1`,
        180_000,
      );
      const packetMs = Date.now() - t0;
      assert.equal(probe.code, 0, 'the warm nested pod never reached bare-l2');
      console.log(
        `# nested pod on a warm subport (pool min 1): pod → VIF ${vifMs} ms, → raven-cni ADD done ` +
          `${(addMs / 1000).toFixed(1)} s (plugin ${JSON.stringify(addTimings(add))}), → first packet ` +
          `${(packetMs / 1000).toFixed(1)} s; host load ${(await readFile('/proc/loadavg', 'utf8')).trim()}`,
      );
      assert.equal(
        onTrunk.get(vif.portId),
        vif.nested!.vlan,
        'the subport was on the trunk, at that VLAN, before the pod',
      );
      assert.equal((await poolMetrics()).hits, hits + 1, 'the pool served the pod');
      assert.equal(addTimings(add)?.verifiedBy, 'signature');
      await respond('pod-warm', 'warm');
      first = { pod, vif };
    });

    it('a NetworkPolicy isolates the nested pod: only bare-l2 reaches it on TCP 8080; deleted, everyone does again', async () => {
      assert.ok(first, 'the warm pod is plugged');
      const address = first.vif.ips[0]!.address;
      for (const bare of ['bare-l2', 'bare-routed'])
        await waitFor(
          `${bare} → nested ${address}:8080`,
          async () => (await bareTcp(bare, address)) === 'warm',
          PACKETS,
        );
      const policy = await kube!.create(
        resources.networkpolicies,
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { name: `${tag}-only-l2`, namespace: 'default' },
          spec: {
            podSelector: { matchLabels: { app } },
            policyTypes: ['Ingress'],
            ingress: [{ from: [{ ipBlock: { cidr: `${ip(bareL2)}/32` } }], ports: [{ protocol: 'TCP', port: 8080 }] }],
          },
        },
        { namespace: 'default' },
      );
      await waitFor(
        'bare-routed → nested TCP denied',
        async () => (await bareTcp('bare-routed', address)) === '',
        PACKETS,
      );
      assert.equal(await bareTcp('bare-l2', address), 'warm', 'the policy admits bare-l2');
      const l2Pings = await pings(`${rig.netnsPrefix}${tag}-bare-l2`, address, 1);
      assert.equal(l2Pings, false, 'ICMP is not among the ports the policy admits');
      await kube!.delete(resources.networkpolicies, policy.metadata.name ?? '', 'default');
      await waitFor(
        'bare-routed → nested TCP admitted again',
        async () => (await bareTcp('bare-routed', address)) === 'warm',
        PACKETS,
      );
    });

    it("a deleted pod's subport goes back to its pool, on the trunk at its VLAN id; a later pod takes it and is plugged", async () => {
      assert.ok(first, 'the warm pod is plugged');
      const { pod, vif } = first;
      assert.equal((await cni('DEL', pod, 'pod-warm')).code, 0);
      await vm!.must('ip netns del pod-warm');
      await kube!.delete(resources.pods, pod.metadata.name ?? '', 'default');
      // Pools hand out their oldest free port first: the refill's since the pod took its own, then this one (the pool
      // keeps 3 free at most, so none is trimmed). A pod is made until one takes it, 3 at most.
      await sleep(3000);
      const later: { pod: Pod; vif: Vif }[] = [];
      for (const name of ['next-1', 'next-2', 'next-3']) {
        assert.ok((await trunkSubports()).has(vif.portId), 'the freed subport is still on the trunk');
        const next = await createPod(name);
        later.push({ pod: next, vif: await controllerVif(next) });
        if (later.at(-1)!.vif.portId === vif.portId) break;
      }
      const reused = later.find((l) => l.vif.portId === vif.portId);
      assert.ok(
        reused,
        `a later pod took the freed subport ${vif.portId}: ${later.map((l) => l.vif.portId).join(', ')}`,
      );
      assert.equal(reused.vif.nested!.vlan, vif.nested!.vlan, 'on the same VLAN id');
      assert.equal((await trunkSubports()).get(vif.portId), vif.nested!.vlan);
      await vm!.must('ip netns add pod-next');
      const add = await cni('ADD', reused.pod, 'pod-next', { vifKeyFile: `${GUEST_DIR}/vif.key` });
      assert.equal(add.code, 0, `${add.stdout}\n${JSON.stringify(add.log)}`);
      const nextPings = async () =>
        (await vm!.run(`ip netns exec pod-next ping -n -q -c 1 -W 2 ${ip(bareL2)}`, 15_000)).code === 0;
      await waitFor('the recycled subport’s pod → bare-l2 ping', nextPings, PACKETS);
      await waitFor(
        'the claim: the subport’s device_id is the new pod’s',
        async () =>
          (await neutron<{ port: { device_id: string } }>('GET', `ports/${vif.portId}`)).port.device_id ===
          reused.pod.metadata.uid,
        { timeoutMs: 60_000 },
      );
      await respond('pod-next', 'next');
      member = reused;
    });

    it(
      "a nested pod reaches a Service's VIP (its clusterIP, Octavia's OVN provider) whose member is a nested pod",
      { skip: !OCTAVIA && 'the rig runs no Octavia' },
      async () => {
        assert.ok(member, 'the recycled subport’s pod is plugged and answers');
        // what the kubelet writes once the CNI answered: the pod's address, by which Raven admits it as a member
        await kube!.patch(
          resources.pods,
          member.pod.metadata.name ?? '',
          'default',
          {
            status: {
              phase: 'Running',
              podIP: member.vif.ips[0]!.address,
              podIPs: [{ ip: member.vif.ips[0]!.address }],
            },
          },
          'merge',
          { subresource: 'status' },
        );
        // a Service without a selector, and its slice as the endpoint controller would write it
        const svc = await kube!.create(
          resources.services,
          {
            apiVersion: 'v1',
            kind: 'Service',
            metadata: { name: `${tag}-web`, namespace: 'default' },
            spec: { ports: [{ name: 'tcp', port: 80, targetPort: 8080, protocol: 'TCP' }] },
          },
          { namespace: 'default' },
        );
        const vip = svc.spec?.clusterIP ?? '';
        assert.ok(vip, 'the API server gave the Service a clusterIP');
        await kube!.create(
          resources.endpointslices,
          {
            apiVersion: 'discovery.k8s.io/v1',
            kind: 'EndpointSlice',
            metadata: {
              name: `${tag}-web-1`,
              namespace: 'default',
              labels: { 'kubernetes.io/service-name': `${tag}-web` },
            },
            addressType: 'IPv4',
            endpoints: [
              {
                addresses: [member.vif.ips[0]!.address],
                conditions: { ready: true },
                nodeName: VM_NODE,
                targetRef: {
                  kind: 'Pod',
                  namespace: 'default',
                  name: member.pod.metadata.name ?? '',
                  uid: member.pod.metadata.uid ?? '',
                },
              },
            ],
            ports: [{ name: 'tcp', port: 8080, protocol: 'TCP' }],
          },
          { namespace: 'default' },
        );
        // the client: a nested pod of its own, from the pool
        const client = await createPod('client');
        await vm!.must('ip netns add pod-client');
        const add = await cni('ADD', client, 'pod-client', { vifKeyFile: `${GUEST_DIR}/vif.key` });
        assert.equal(add.code, 0, `${add.stdout}\n${JSON.stringify(add.log)}`);
        const viaVip = async (netns: string) => {
          const { output, code } = await vm!.run(
            `ip netns exec ${netns} socat -T3 - TCP:${vip}:80,connect-timeout=3 </dev/null`,
            15_000,
          );
          return code === 0 ? output.trim() : '';
        };
        // Octavia makes the load balancer once Raven asks: minutes at most on this rig
        await waitFor(
          `nested client → ${vip}:80 (the member answers)`,
          async () => (await viaVip('pod-client')) === 'next',
          {
            timeoutMs: 180_000,
            intervalMs: 1000,
            explain: () => `Raven's last log lines:\n${recentLogs(30)}`,
          },
        );
        assert.equal(
          await bareTcpTo('bare-l2', vip, 80),
          'next',
          'a bare pod reaches the nested member through the VIP',
        );
        assert.equal((await cni('DEL', client, 'pod-client')).code, 0);
        await kube!.delete(resources.pods, client.metadata.name ?? '', 'default');
        await kube!.delete(resources.services, svc.metadata.name ?? '', 'default');
      },
    );

    describe('a second VM, another node with its own trunk', () => {
      const VM2_NODE = 'nvm-vm-2';
      const serverId2 = randomUUID();
      let trunk2 = '';

      before(async () => {
        const vmPort2 = (await make('port', {
          name: `${tag}-vm-2`,
          network_id: nodesNet,
          security_groups: [podsGroup],
          'binding:host_id': rig.host,
          device_owner: 'compute:nova',
          device_id: serverId2,
        })) as unknown as Port;
        trunk2 = (await make('trunk', { name: `${tag}-trunk-2`, port_id: vmPort2.id })).id;
        const tap = `${rig.interfacePrefix}${vmPort2.id.slice(0, 11)}`;
        const t0 = Date.now();
        const booting2 = startVm({ tap, mac: vmPort2.mac_address, share, forwards });
        await waitFor(`tap ${tap}`, async () => (await rootDevices([tap])).length > 0, { timeoutMs: 30_000 });
        await plug(tap, vmPort2);
        vm2 = await booting2;
        console.log(`# second VM up ${((Date.now() - t0) / 1000).toFixed(1)} s after qemu started`);
        await vm2.must(`${mountShare(GUEST_DIR, forwards)}\nip link set eth0 mtu 1442 up\nip netns add pod-far`);
        await registerVmNode(kube!, VM2_NODE, serverId2);
      });

      it('a nested pod on it reaches the nested pod on the first VM, and back (TCP both ways)', async () => {
        assert.ok(member, 'the first VM’s nested pod is plugged and answers');
        const far = await createPod('far', undefined, VM2_NODE);
        const vif = await controllerVif(far);
        assert.equal(vif.nested!.trunkId, trunk2, 'a subport of the second VM’s trunk');
        assert.equal(
          (await neutron<{ sub_ports: { port_id: string }[] }>('GET', `trunks/${trunk2}/get_subports`)).sub_ports.some(
            (p) => p.port_id === vif.portId,
          ),
          true,
        );
        const add = await cni(
          'ADD',
          far,
          'pod-far',
          { vifKeyFile: `${GUEST_DIR}/vif.key`, nodeName: VM2_NODE, serverId: serverId2 },
          vm2,
        );
        assert.equal(add.code, 0, `${add.stdout}\n${JSON.stringify(add.log)}`);
        await respond('pod-far', 'far', vm2);
        const tcp = async (guest: Vm, netns: string, address: string) => {
          const { output, code } = await guest.run(
            `ip netns exec ${netns} socat -T3 - TCP:${address}:8080,connect-timeout=3 </dev/null`,
            15_000,
          );
          return code === 0 ? output.trim() : '';
        };
        const nearAddress = member.vif.ips[0]!.address;
        const farAddress = vif.ips[0]!.address;
        await waitFor(
          `far (VM 2) → ${nearAddress}:8080 (VM 1)`,
          async () => (await tcp(vm2!, 'pod-far', nearAddress)) === 'next',
          PACKETS,
        );
        await waitFor(
          `near (VM 1) → ${farAddress}:8080 (VM 2)`,
          async () => (await tcp(vm!, 'pod-next', farAddress)) === 'far',
          PACKETS,
        );
      });
    });
  });
});
