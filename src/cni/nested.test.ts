/**
 * raven-cni's nested mode against the API server and the OpenStack simulator (its ML2/OVN trunk driver): what a VIF
 * naming a trunk subport must pass before anything is plugged, with real connections. The VLAN sub-interface itself
 * needs 802.1Q, which this host's kernel lacks: test/dataplane/nested-vm.test.ts plugs it in a real VM.
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from '../../test/support/node-test.ts';
import { annotate, createPod, startCniNode, vifFor, type CniNode } from '../../test/support/cni.ts';
import { signVif, type Pod, type Vif } from '../kube/api/index.ts';
import { resources } from '../kube/client/index.ts';
import type { Port } from '../openstack/index.ts';
import { parseRavenCniConf } from './config.ts';
import { runPlugin, verifiedPlan, type AddPhase } from './plugin.ts';
import { cniErrorSchema, readCniEnvironment } from './spec/index.ts';

const podArgs = (name: string, uid: string) => `K8S_POD_NAMESPACE=default;K8S_POD_NAME=${name};K8S_POD_UID=${uid}`;

describe('raven-cni in nested mode (a VM: pods on its trunk subports)', () => {
  let node: CniNode;
  const serverId = randomUUID();
  /** This VM's trunk and NIC (the trunk's parent), and another VM's. */
  let mine: { trunk: string; parent: Port };
  let theirs: { trunk: string; parent: Port };
  let vlan = 100;

  async function vmTrunk(server: string) {
    const parent = await node.neutron.ports.create({
      network_id: node.networkId,
      device_id: server,
      device_owner: 'compute:nova',
    });
    const trunk = await node.neutron.trunks.create({ port_id: parent.id });
    return { trunk: trunk.id, parent };
  }

  before(async () => {
    node = await startCniNode('vm-1');
    mine = await vmTrunk(serverId);
    theirs = await vmTrunk(randomUUID());
  });
  after(() => node.close());

  /**
   * What the controller does for a nested pod: a port (no device, no owner) made a subport of `on`'s trunk, then the
   * pod's claim on its device_id (a port with a device_id cannot join a trunk), and the VIF with `nested`.
   */
  async function nestedPod(name: string, on = mine, claim = true) {
    const pod = await createPod(node, name);
    const uid = pod.metadata.uid ?? '';
    const port = await node.neutron.ports.create({
      network_id: node.networkId,
      fixed_ips: [{ subnet_id: node.subnetId }],
    });
    const segmentation = ++vlan;
    await node.neutron.trunks.addSubports(on.trunk, [
      { port_id: port.id, segmentation_type: 'vlan', segmentation_id: segmentation },
    ]);
    if (claim) await node.neutron.ports.update(port.id, { device_id: uid });
    const nested = { trunkId: on.trunk, vlan: segmentation, parentMac: on.parent.mac_address };
    const vif: Vif = { ...vifFor(node, port, uid), nested };
    return { pod, uid, port, vif };
  }

  const conf = (extra: Record<string, unknown> = {}) =>
    parseRavenCniConf(JSON.stringify(node.conf({ mode: 'nested', serverId, ...extra })));
  const rawEnv = (pod: Pod) => ({
    CNI_COMMAND: 'ADD',
    CNI_CONTAINERID: `c-${pod.metadata.name}`,
    CNI_IFNAME: 'eth0',
    CNI_NETNS: '/run/netns/none',
    CNI_ARGS: podArgs(pod.metadata.name ?? '', pod.metadata.uid ?? ''),
  });
  const envOf = (pod: Pod) => readCniEnvironment(rawEnv(pod));
  const verify = (pod: Pod, extra: Record<string, unknown> = {}, lap?: (phase: AddPhase) => void) =>
    verifiedPlan(conf(extra), envOf(pod), node, {
      vifTimeoutMs: 3_000,
      signal: AbortSignal.timeout(30_000),
      ...(lap ? { lap } : {}),
    });
  /** The CNI error a verification ends in. */
  async function refusal(pod: Pod, extra: Record<string, unknown> = {}) {
    const outcome = await runPlugin({
      env: rawEnv(pod),
      stdin: JSON.stringify(node.conf({ mode: 'nested', serverId, ...extra })),
      signal: AbortSignal.timeout(30_000),
      startupMs: 0,
      log: () => undefined,
    });
    assert.equal(outcome.exitCode, 1, outcome.stdout);
    return cniErrorSchema.parse(JSON.parse(outcome.stdout));
  }

  it('plans a subport checked against Neutron: its VLAN on this VM’s trunk, the VM’s NIC by MAC', async () => {
    const { pod, port, vif } = await nestedPod('nested-a');
    await annotate(node, pod, vif);
    const { plan, by } = await verify(pod);
    assert.equal(by, 'neutron');
    assert.deepEqual(
      [plan.kind, plan.portId, plan.mac, plan.tap, plan.nested],
      [
        'vlan',
        port.id,
        port.mac_address,
        `rvlan${vif.nested?.vlan}`,
        { vlan: vif.nested?.vlan, parentMac: mine.parent.mac_address },
      ],
    );
    assert.deepEqual(
      plan.ips.map((i) => i.address),
      port.fixed_ips.map((i) => i.ip_address),
    );
  });

  it('waits for the claim a subport gets only after it joined the trunk', async () => {
    const { pod, uid, port, vif } = await nestedPod('nested-late', mine, false);
    await annotate(node, pod, vif);
    let claimed: Promise<unknown> | undefined;
    const { plan } = await verify(pod, {}, (phase) => {
      if (phase === 'neutron') claimed ??= node.neutron.ports.update(port.id, { device_id: uid });
    });
    await claimed;
    assert.equal(plan.deviceId, uid);
  });

  it('refuses forged annotations: another pod’s subport, another VLAN, another trunk, another VM’s NIC', async () => {
    const victim = await nestedPod('victim');
    const thief = await nestedPod('thief');
    const cases: { name: string; vif: (v: Vif) => Vif; msg: RegExp }[] = [
      {
        name: 'another pod’s subport',
        vif: () => ({ ...victim.vif, podUid: thief.uid }),
        msg: new RegExp(`port ${victim.port.id} belongs to device "${victim.uid}"`),
      },
      {
        name: 'another VLAN (the victim’s)',
        vif: (v) => ({ ...v, nested: { ...v.nested!, vlan: victim.vif.nested!.vlan } }),
        msg: new RegExp(`at vlan ${thief.vif.nested!.vlan}, the annotation says VLAN ${victim.vif.nested!.vlan}`),
      },
      {
        name: 'another trunk',
        vif: (v) => ({ ...v, nested: { ...v.nested!, trunkId: theirs.trunk, parentMac: theirs.parent.mac_address } }),
        msg: new RegExp(`port ${thief.port.id} is not a subport of trunk ${theirs.trunk}`),
      },
      {
        name: 'another NIC',
        vif: (v) => ({ ...v, nested: { ...v.nested!, parentMac: theirs.parent.mac_address } }),
        msg: /trunk .*'s parent port has MAC .*, the annotation says/,
      },
      {
        name: 'a bad shape',
        vif: (v) => ({ ...v, nested: { ...v.nested!, vlan: '101 name x' as unknown as number } }),
        msg: /nested field is not \{trunkId, vlan 1–4094, parentMac\}/,
      },
    ];
    for (const c of cases) {
      await annotate(node, thief.pod, c.vif(thief.vif));
      const out = await refusal(thief.pod);
      assert.equal(out.code, 100, c.name);
      assert.match(out.msg, c.msg, c.name);
    }
    // A pod of another VM's trunk, annotated truthfully, is still not this VM's to plug.
    const stranger = await nestedPod('stranger', theirs);
    await annotate(node, stranger.pod, stranger.vif);
    const out = await refusal(stranger.pod);
    assert.equal(out.code, 100);
    assert.match(out.msg, new RegExp(`parent port ${theirs.parent.id} belongs to device ".*", not to this VM`));
  });

  it('takes its server id from the Node’s providerID when the configuration gives none', async () => {
    const { pod, vif } = await nestedPod('by-provider');
    await annotate(node, pod, vif);
    const out = await refusal(pod, { serverId: undefined });
    assert.equal(out.code, 102, 'no Node yet');
    await node.kube.create(resources.nodes, {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: node.nodeName },
      spec: { providerID: `openstack:///${serverId}` },
    });
    const { plan } = await verify(pod, { serverId: undefined });
    assert.equal(plan.kind, 'vlan');
  });

  it('refuses the other mode’s VIFs: a subport on a host, a bound port in a VM', async () => {
    const { pod, vif } = await nestedPod('on-host');
    await annotate(node, pod, vif);
    const onHost = await refusal(pod, { mode: 'host' });
    assert.equal(onHost.code, 101);
    assert.match(onHost.msg, /is a trunk subport \(nested\); this node plugs bound ports/);
    await annotate(node, pod, { ...vif, nested: undefined });
    const inVm = await refusal(pod);
    assert.equal(inVm.code, 101);
    assert.match(inVm.msg, /is not a trunk subport, and this node \(a VM, "mode": "nested"\) plugs only subports/);
  });

  it('trusts a subport VIF Raven signed for this node (plug vlan) alone; a bound-port signature goes to Neutron', async () => {
    const keyFile = join(node.dir, 'vif.key');
    const key = randomBytes(32);
    await writeFile(keyFile, key);
    const cases = [
      { plug: 'vlan' as const, node: node.nodeName, distrust: undefined },
      { plug: 'vlan' as const, node: 'vm-2', distrust: /signed for node vm-2/ },
      { plug: 'ovs' as const, node: node.nodeName, distrust: /not a subport VIF, and this node is a VM/ },
    ];
    for (const c of cases) {
      // no claim: a signed VIF needs none; the others wait for it and get it after the first Neutron read
      const { pod, uid, port, vif } = await nestedPod(`signed-${c.plug}-${c.node}`, mine, false);
      await annotate(node, pod, signVif(vif, key, { node: c.node, plug: c.plug, epoch: 0 }));
      let reads = 0;
      const verified = await verify(pod, { vifKeyFile: keyFile }, (phase) => {
        if (phase === 'neutron' && reads++ === 0) void node.neutron.ports.update(port.id, { device_id: uid });
      });
      assert.equal(verified.plan.kind, 'vlan', c.plug);
      assert.deepEqual(verified.plan.nested, { vlan: vif.nested?.vlan, parentMac: mine.parent.mac_address });
      if (c.distrust === undefined) assert.deepEqual([verified.by, reads], ['signature', 0]);
      else {
        assert.equal(verified.by, 'neutron');
        assert.match(verified.distrust ?? '', c.distrust);
      }
    }
  });

  it('ADD of a verified subport refuses to plug where no NIC has the parent’s MAC, and keeps no claim', async () => {
    const { pod, port, vif } = await nestedPod('no-nic');
    await annotate(node, pod, vif);
    const out = await refusal(pod);
    assert.equal(out.code, 100);
    assert.match(out.msg, new RegExp(`this VM has no NIC with MAC ${mine.parent.mac_address}`));
    // the port's record on the node went with the failed ADD
    assert.equal(existsSync(join(node.dir, 'state', 'ports', port.id)), false);
  });
});
