import { setTimeout as setTimeoutPromise } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, describe, it } from '../../test/support/node-test.ts';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import {
  annotate,
  createPod,
  createPodPort,
  createPoolPort,
  startCniNode,
  vifFor,
  ravenCniBin,
  type CniNode,
  execPlugin,
  CniCallError,
} from '../../test/support/cni.ts';
import { startNodeDaemon } from './node-daemon.ts';
import { openNodeConnections, phaseClock, runPlugin, verifiedPlan, type AddPhase } from './plugin.ts';
import { parseRavenCniConf } from './config.ts';
import { signVif, type Vif } from '../kube/api/index.ts';
import { resources } from '../kube/client/index.ts';
import { cniErrorSchema, cniResultSchema, cniVersionResultSchema, readCniEnvironment } from './spec/index.ts';
import { bridgeName, tapName } from './verify.ts';
import { ovsSkipReason, startTestOvs, type TestOvs } from '../../test/support/ovs.ts';
import { waitFor } from '../../test/support/wait.ts';

const sh = promisify(execFile);
const isRoot = process.getuid?.() === 0;

/** One in-process call, as the runtime would make it; the answer parsed. */
async function call(env: Record<string, string>, stdin: unknown) {
  const outcome = await runPlugin({
    env: { CNI_CONTAINERID: 'c1', CNI_IFNAME: 'eth0', CNI_NETNS: '/run/netns/none', ...env },
    stdin: typeof stdin === 'string' ? stdin : JSON.stringify(stdin),
    signal: AbortSignal.timeout(30_000),
    startupMs: 0,
    log: () => undefined,
  });
  const body: unknown = outcome.stdout === '' ? undefined : JSON.parse(outcome.stdout);
  return { exitCode: outcome.exitCode, body };
}

function failure(outcome: { exitCode: number; body: unknown }) {
  assert.equal(outcome.exitCode, 1);
  return cniErrorSchema.parse(outcome.body);
}

const podArgs = (name: string, uid?: string) =>
  `K8S_POD_NAMESPACE=default;K8S_POD_NAME=${name};K8S_POD_INFRA_CONTAINER_ID=c1${uid ? `;K8S_POD_UID=${uid}` : ''}`;

describe('raven-cni against the API server and the OpenStack simulator', () => {
  let node: CniNode;
  before(async () => {
    node = await startCniNode();
  });
  after(() => node.close());

  it('VERSION names the versions it speaks, in the shape the spec gives', async () => {
    const out = await call({ CNI_COMMAND: 'VERSION' }, { cniVersion: '1.0.0' });
    const version = cniVersionResultSchema.parse(out.body);
    assert.deepEqual(version, { cniVersion: '1.0.0', supportedVersions: ['0.4.0', '1.0.0'] });
  });

  it('refuses a bad call with the spec code that says why', async () => {
    assert.equal(failure(await call({ CNI_COMMAND: 'ADD' }, '{not json')).code, 6);
    assert.match(failure(await call({ CNI_COMMAND: 'ADD' }, node.conf({ kubeconfig: 7 }))).msg, /kubeconfig/);
    assert.equal(failure(await call({ CNI_COMMAND: 'ADD' }, node.conf({ cniVersion: '0.3.1' }))).code, 1);
    const noPod = failure(await call({ CNI_COMMAND: 'ADD' }, node.conf()));
    assert.equal(noPod.code, 4);
    assert.match(noPod.msg, /K8S_POD_NAMESPACE and K8S_POD_NAME/);
    assert.equal(failure(await call({ CNI_COMMAND: 'BOGUS' }, node.conf())).code, 4);
  });

  it('refuses an annotation that names another pod’s port, before touching the node', async () => {
    const victim = await createPod(node, 'victim');
    const port = await createPodPort(node, victim);
    const thief = await createPod(node, 'thief');
    // A namespace user copies the victim's VIF onto their own pod, with their own uid so it looks current.
    await annotate(node, thief, vifFor(node, port, thief.metadata.uid ?? ''));
    const out = failure(await call({ CNI_COMMAND: 'ADD', CNI_ARGS: podArgs('thief') }, node.conf()));
    assert.equal(out.code, 100);
    assert.match(out.msg, new RegExp(`port ${port.id} belongs to device "${victim.metadata.uid}"`));
  });

  it('refuses a port bound to another host, one on a host with no agent, and a vif_type it cannot plug', async () => {
    const elsewhere = await createPod(node, 'elsewhere');
    const far = await createPodPort(node, elsewhere, 'other-node');
    await annotate(node, elsewhere, vifFor(node, far, elsewhere.metadata.uid ?? ''));
    const out = failure(await call({ CNI_COMMAND: 'ADD', CNI_ARGS: podArgs('elsewhere') }, node.conf()));
    assert.equal(out.code, 100);
    assert.match(out.msg, /is bound to host "other-node", this node is "node-cni"/);

    const agentless = await createPod(node, 'agentless');
    const unbound = await createPodPort(node, agentless, 'no-agent');
    await annotate(node, agentless, vifFor(node, unbound, agentless.metadata.uid ?? ''));
    const noAgent = node.conf({ nodeName: 'no-agent' });
    const later = failure(await call({ CNI_COMMAND: 'ADD', CNI_ARGS: podArgs('agentless') }, noAgent));
    assert.equal(later.code, 11, 'binding failed: the agent may yet come up');
    assert.match(later.msg, /binding_failed on host "no-agent": is this node's Neutron agent/);

    // An OVS port on a node whose configuration names no running OVS: "try again later", saying where it looked.
    const ovs = await createPod(node, 'ovs');
    const ovsPort = await createPodPort(node, ovs, 'host-ovs-filter-active');
    await annotate(node, ovs, vifFor(node, ovsPort, ovs.metadata.uid ?? ''));
    const noSwitch = { nodeName: 'host-ovs-filter-active', ovs: { database: `unix:${node.dir}/no-ovs.sock` } };
    const notYet = failure(await call({ CNI_COMMAND: 'ADD', CNI_ARGS: podArgs('ovs') }, node.conf(noSwitch)));
    assert.equal(notYet.code, 11);
    assert.match(notYet.msg, /bound the port as "ovs", but there is no Open vSwitch database at unix:.*no-ovs\.sock/);
  });

  /** A pod, a pool port of its node with no claim yet (no device_id), and the ADD call's configuration. */
  async function pooledPod(name: string, extra: Record<string, unknown> = {}) {
    const pod = await createPod(node, name);
    const uid = pod.metadata.uid ?? '';
    const port = await createPoolPort(node);
    const conf = parseRavenCniConf(JSON.stringify(node.conf(extra)));
    const env = readCniEnvironment({
      CNI_COMMAND: 'ADD',
      CNI_CONTAINERID: `c-${name}`,
      CNI_IFNAME: 'eth0',
      CNI_NETNS: '/run/netns/none',
      CNI_ARGS: podArgs(name, uid),
    });
    return { pod, uid, port, conf, env };
  }

  it('waits for a pool port’s claim: the Neutron reads are counted, and the sleeps apart', async () => {
    // Raven published the VIF; its claim lands after the plugin's first read.
    const { pod, uid, port, conf, env } = await pooledPod('pooled');
    await annotate(node, pod, vifFor(node, port, uid));
    const clock = phaseClock();
    let claimed: Promise<unknown> | undefined;
    const { plan } = await verifiedPlan(conf, env, node, {
      vifTimeoutMs: 5_000,
      signal: AbortSignal.timeout(30_000),
      lap: (phase: AddPhase) => {
        clock.lap(phase);
        if (phase === 'neutron') claimed ??= node.neutron.ports.update(port.id, { device_id: uid });
      },
    });
    await claimed;
    assert.equal(plan.portId, port.id);
    assert.equal(plan.deviceId, uid);
    // The first read found the port free, the sleep let the claim land, the second read found it the pod's.
    assert.deepEqual(clock.count, { kubernetes: 2, neutron: 2, claim: 1 });
  });

  it('trusts a VIF Raven signed for this node in the Lease’s term alone; anything else goes to Neutron', async () => {
    const keyFile = join(node.dir, 'vif.key');
    const key = randomBytes(32);
    await writeFile(keyFile, key);
    const lease = { namespace: 'default', name: `raven-${process.pid}` };
    await node.kube.create(resources.leases, {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: lease.name, namespace: lease.namespace },
      spec: { holderIdentity: 'raven-a', leaseTransitions: 1 },
    });
    const cases: { name: string; sign: (v: Vif) => Vif; trusted: RegExp | undefined }[] = [
      {
        name: 'current',
        sign: (v) => signVif(v, key, { node: node.nodeName, plug: 'bridge', epoch: 1 }),
        trusted: undefined,
      },
      {
        name: 'stale-term',
        sign: (v) => signVif(v, key, { node: node.nodeName, plug: 'bridge', epoch: 0 }),
        trusted: /signed in leader term 0, the Lease's is 1/,
      },
      {
        name: 'other-node',
        sign: (v) => signVif(v, key, { node: 'node-b', plug: 'bridge', epoch: 1 }),
        trusted: /signed for node node-b/,
      },
      {
        name: 'other-key',
        sign: (v) => signVif(v, randomBytes(32), { node: node.nodeName, plug: 'bridge', epoch: 1 }),
        trusted: /does not verify/,
      },
      { name: 'unsigned', sign: (v) => v, trusted: /not signed/ },
    ];
    for (const c of cases) {
      const { pod, uid, port, conf, env } = await pooledPod(`signed-${c.name}`, {
        vifKeyFile: keyFile,
        leaderLease: lease,
      });
      await annotate(node, pod, c.sign(vifFor(node, port, uid)));
      let reads = 0;
      // The claim has not landed: a VIF trusted alone needs no Neutron read; one that is not waits for the claim.
      const verified = await verifiedPlan(conf, env, node, {
        vifTimeoutMs: 5_000,
        signal: AbortSignal.timeout(30_000),
        lap: (phase: AddPhase) => {
          if (phase === 'neutron' && reads++ === 0) void node.neutron.ports.update(port.id, { device_id: uid });
        },
      });
      assert.equal(verified.plan.portId, port.id, c.name);
      assert.equal(verified.plan.mac, port.mac_address, c.name);
      if (c.trusted === undefined) {
        assert.deepEqual([verified.by, reads], ['signature', 0], c.name);
        assert.equal(verified.plan.bridge, bridgeName(node.networkId));
      } else {
        assert.equal(verified.by, 'neutron', c.name);
        assert.match(verified.distrust ?? '', c.trusted, c.name);
      }
    }
  });

  it("waits for the claim from when the VIF came, not from the ADD's start (a burst's late VIF keeps its wait)", async () => {
    const { pod, uid, port, conf, env } = await pooledPod('late');
    // The VIF comes 2 s into a 3 s VIF wait; the claim lands 1 s after the plugin first reads the port, past the
    // ADD's first 3 s but well inside 3 s from the VIF.
    const published = setTimeout(() => void annotate(node, pod, vifFor(node, port, uid)), 2_000);
    let claimed: Promise<unknown> | undefined;
    try {
      const { plan } = await verifiedPlan(conf, env, node, {
        vifTimeoutMs: 3_000,
        signal: AbortSignal.timeout(30_000),
        lap: (phase: AddPhase) => {
          if (phase === 'neutron')
            claimed ??= setTimeoutPromise(1_000).then(() => node.neutron.ports.update(port.id, { device_id: uid }));
        },
      });
      assert.equal(plan.deviceId, uid);
    } finally {
      clearTimeout(published);
      await claimed;
    }
  });

  it('answers "try again later" with the reason when the VIF is stale past the wait', async () => {
    const pod = await createPod(node, 'stale');
    const port = await createPodPort(node, pod);
    await annotate(node, pod, vifFor(node, port, 'an-earlier-incarnation'));
    const out = failure(
      await call({ CNI_COMMAND: 'ADD', CNI_ARGS: podArgs('stale') }, node.conf({ vifTimeoutSeconds: 0.5 })),
    );
    assert.equal(out.code, 11);
    assert.match(out.msg, /no VIF after 1 s: .*written for pod uid an-earlier-incarnation/);
  });

  it('DEL without a namespace or a result succeeds, and leaves nothing to do twice', async () => {
    for (let i = 0; i < 2; i++) {
      const out = await call({ CNI_COMMAND: 'DEL', CNI_NETNS: '', CNI_ARGS: podArgs('gone') }, node.conf());
      assert.deepEqual(out, { exitCode: 0, body: undefined });
    }
  });

  it('the executable answers over stdin/stdout like any plugin', async () => {
    const call = { containerId: 'c1', netns: '', ifName: 'eth0', args: {} };
    const version = await execPlugin(ravenCniBin, 'VERSION', { cniVersion: '1.0.0' }, call, { dirs: [] });
    assert.equal(version.result, undefined);
    await assert.rejects(
      execPlugin(ravenCniBin, 'ADD', node.conf(), { ...call, netns: '/run/netns/none' }, { dirs: [] }),
      (err: unknown) => err instanceof CniCallError && err.body?.code === 4 && /K8S_POD_NAME/.test(err.message),
    );
  });

  it('forwards to raven node when the configuration names its socket; without it, ADD says so and DEL still works', async () => {
    const socketPath = join(node.dir, 'raven-node.sock');
    const stop = new AbortController();
    const connections = await openNodeConnections({ kubeconfig: node.kubeconfig, cloudsYaml: node.cloudsYaml });
    const daemon = await startNodeDaemon({ socketPath, connections, log: () => undefined }, stop.signal);
    const victim = await createPod(node, 'victim-2');
    const port = await createPodPort(node, victim);
    const thief = await createPod(node, 'thief-2');
    await annotate(node, thief, vifFor(node, port, thief.metadata.uid ?? ''));
    const args = { K8S_POD_NAMESPACE: 'default', K8S_POD_NAME: 'thief-2' };
    const sandbox = { containerId: 'c2', netns: '/run/netns/none', ifName: 'eth0', args };
    const forwarded = node.conf({ daemonSocket: socketPath });
    await assert.rejects(
      execPlugin(ravenCniBin, 'ADD', forwarded, sandbox, { dirs: [] }),
      (err: unknown) => err instanceof CniCallError && err.body?.code === 100 && /belongs to device/.test(err.message),
    );
    stop.abort();
    await daemon.stopped;
    await assert.rejects(
      execPlugin(ravenCniBin, 'ADD', forwarded, sandbox, { dirs: [] }),
      (err: unknown) =>
        err instanceof CniCallError && err.body?.code === 11 && /raven node is not answering/.test(err.message),
    ); // DEL needs no daemon: it runs in the plugin itself and succeeds.
    const deleted = await execPlugin(ravenCniBin, 'DEL', forwarded, { ...sandbox, netns: '' }, { dirs: [] });
    assert.equal(deleted.result, undefined);
  });

  describe('plugging (root: a network namespace, no Neutron agent)', { skip: !isRoot && 'needs root' }, () => {
    const netns = `raven-cni-test-${process.pid}`;
    const netnsPath = `/run/netns/${netns}`;
    let bridge = '';
    before(async () => {
      bridge = bridgeName(node.networkId);
      await sh('ip', ['netns', 'add', netns]);
    });
    after(async () => {
      await sh('ip', ['netns', 'del', netns]).catch(() => undefined);
      await sh('ip', ['link', 'del', bridge]).catch(() => undefined);
    });

    it('ADD waits for the VIF, plugs the port’s MAC, address, MTU and route, and CHECK/DEL follow', async () => {
      const pod = await createPod(node, 'plugged');
      const port = await createPodPort(node, pod);
      const args = podArgs('plugged', pod.metadata.uid);
      const env = { CNI_NETNS: netnsPath, CNI_ARGS: args };
      // Raven is "slow": the annotation comes while ADD waits. No agent here: the plugin makes the bridge itself.
      const adding = call({ ...env, CNI_COMMAND: 'ADD' }, node.conf());
      setTimeout(() => void annotate(node, pod, vifFor(node, port, pod.metadata.uid ?? '')), 300);
      const added = await adding;
      assert.equal(added.exitCode, 0, JSON.stringify(added.body));
      const result = cniResultSchema.parse(added.body);
      const address = port.fixed_ips[0]!.ip_address;
      assert.deepEqual(result.ips, [{ address: `${address}/24`, gateway: '10.66.0.1', interface: 1 }]);
      assert.deepEqual(result.routes, [{ dst: '0.0.0.0/0', gw: '10.66.0.1' }]);
      assert.deepEqual(result.interfaces?.[1], { name: 'eth0', mac: port.mac_address, sandbox: netnsPath });
      assert.equal(result.interfaces?.[0]?.name, tapName(port.id));

      const inside = JSON.parse((await sh('ip', ['-n', netns, '-j', 'addr', 'show', 'eth0'])).stdout) as {
        address: string;
        mtu: number;
        addr_info: { family: string; local: string; prefixlen: number }[];
      }[];
      assert.equal(inside[0]?.address, port.mac_address);
      assert.equal(inside[0]?.mtu, 1450);
      assert.deepEqual(
        inside[0]?.addr_info.filter((a) => a.family === 'inet').map((a) => `${a.local}/${a.prefixlen}`),
        [`${address}/24`],
      );
      const master = JSON.parse((await sh('ip', ['-j', 'link', 'show', tapName(port.id)])).stdout) as {
        master?: string;
      }[];
      assert.equal(master[0]?.master, bridge);

      const checkConf = node.conf({ prevResult: result });
      assert.deepEqual(await call({ ...env, CNI_COMMAND: 'CHECK' }, checkConf), { exitCode: 0, body: undefined });
      await sh('ip', ['-n', netns, 'addr', 'flush', 'dev', 'eth0']);
      const broken = failure(await call({ ...env, CNI_COMMAND: 'CHECK' }, checkConf));
      assert.equal(broken.code, 103);
      assert.match(broken.msg, new RegExp(`eth0 lacks ${address}/24`));

      for (let i = 0; i < 2; i++)
        assert.deepEqual(await call({ ...env, CNI_COMMAND: 'DEL' }, checkConf), { exitCode: 0, body: undefined });
      await assert.rejects(sh('ip', ['link', 'show', tapName(port.id)]), /does not exist/);
    });

    it('plugs a VIF signed for this node with Neutron down and no claim yet; a second sandbox never gets the port', async () => {
      const keyFile = join(node.dir, 'vif-plug.key');
      const key = randomBytes(32);
      await writeFile(keyFile, key);
      const conf = node.conf({ vifKeyFile: keyFile });
      const second = `${netns}-b`;
      await sh('ip', ['netns', 'add', second]);
      const faults = `${node.openstack.url}/_sim/faults/rules`;
      try {
        // A pool port Raven gave to two pods (a stale leader's and the current one's signatures, both valid), its
        // claim not landed in Neutron, and Neutron answering nothing but 503.
        const free = await createPoolPort(node);
        const [a, b] = [await createPod(node, 'signed-a'), await createPod(node, 'signed-b')];
        for (const pod of [a, b])
          await annotate(
            node,
            pod,
            signVif(vifFor(node, free, pod.metadata.uid ?? ''), key, { node: node.nodeName, plug: 'bridge', epoch: 0 }),
          );
        const down = await fetch(faults, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ path: '/network/', status: 503 }),
        });
        assert.ok(down.ok, await down.text());
        const envA = { CNI_NETNS: netnsPath, CNI_ARGS: podArgs('signed-a', a.metadata.uid), CNI_CONTAINERID: 'c-a' };
        const added = await call({ ...envA, CNI_COMMAND: 'ADD' }, conf);
        assert.equal(added.exitCode, 0, JSON.stringify(added.body));
        const result = cniResultSchema.parse(added.body);
        assert.deepEqual(result.ips, [
          { address: `${free.fixed_ips[0]!.ip_address}/24`, gateway: '10.66.0.1', interface: 1 },
        ]);
        const mac = JSON.parse((await sh('ip', ['-n', netns, '-j', 'link', 'show', 'eth0'])).stdout) as {
          address: string;
        }[];
        assert.equal(mac[0]?.address, free.mac_address);

        const envB = {
          CNI_NETNS: `/run/netns/${second}`,
          CNI_ARGS: podArgs('signed-b', b.metadata.uid),
          CNI_CONTAINERID: 'c-b',
        };
        const refused = failure(await call({ ...envB, CNI_COMMAND: 'ADD' }, conf));
        assert.equal(refused.code, 11);
        assert.match(refused.msg, new RegExp(`port ${free.id} is plugged on this node for container c-a`));
        await assert.rejects(sh('ip', ['-n', second, 'link', 'show', 'eth0']), /does not exist/);

        // Once the first sandbox is gone, the port is the second's (here the stale claim lost; Raven rewrites one VIF).
        assert.equal((await call({ ...envA, CNI_COMMAND: 'DEL' }, conf)).exitCode, 0);
        const later = await call({ ...envB, CNI_COMMAND: 'ADD' }, conf);
        assert.equal(later.exitCode, 0, JSON.stringify(later.body));
        assert.equal((await call({ ...envB, CNI_COMMAND: 'DEL' }, conf)).exitCode, 0);
      } finally {
        await fetch(faults, { method: 'DELETE' }).then((r) => r.text());
        await sh('ip', ['netns', 'del', second]).catch(() => undefined);
      }
    });
  });

  describe('plugging into Open vSwitch (root: a userspace OVS of the test’s own)', { skip: ovsSkipReason() }, () => {
    const host = 'host-ovs-filter-active'; // the simulator binds ports on this host as "ovs", like ML2/OVN
    const bridge = `rvo-br-${process.pid % 100000}`;
    const names = ['a', 'b'].map((p) => `rvo-cni-${process.pid}-${p}`);
    let ovs: TestOvs;
    before(async () => {
      ovs = await startTestOvs(bridge);
      for (const n of names) await sh('ip', ['netns', 'add', n]);
    });
    after(async () => {
      for (const n of names) await sh('ip', ['netns', 'del', n]).catch(() => undefined);
      await ovs?.close();
    });

    /** ADD for a new pod on `host` in namespace `netns`: the result, the port, and the env for CHECK/DEL. */
    async function plugged(name: string, netns: string) {
      const pod = await createPod(node, name);
      const port = await createPodPort(node, pod, host);
      await annotate(node, pod, vifFor(node, port, pod.metadata.uid ?? ''));
      const env = {
        CNI_NETNS: `/run/netns/${netns}`,
        CNI_ARGS: podArgs(name, pod.metadata.uid),
        CNI_CONTAINERID: name,
      };
      const conf = node.conf({ nodeName: host, ovs: { bridge, database: ovs.database, interfacePrefix: 'rvo' } });
      const added = await call({ ...env, CNI_COMMAND: 'ADD' }, conf);
      assert.equal(added.exitCode, 0, JSON.stringify(added.body));
      return { pod, port, env, conf, result: cniResultSchema.parse(added.body) };
    }

    it('ADD plugs an OVS port as os-vif does, packets pass (ICMP and TCP), CHECK and DEL follow', async () => {
      const a = await plugged('ovs-a', names[0]!);
      const b = await plugged('ovs-b', names[1]!);
      const tap = tapName(a.port.id, 'rvo');
      assert.equal(a.result.interfaces?.[0]?.name, tap);
      assert.equal(await ovs.vsctl('port-to-br', tap), `${bridge}\n`);
      const ids = await ovs.vsctl('--format=json', 'get', 'Interface', tap, 'external_ids');
      for (const [key, value] of [
        ['iface-id', a.port.id],
        ['attached-mac', a.port.mac_address],
        ['iface-status', 'active'],
        ['vm-uuid', a.pod.metadata.uid],
      ])
        assert.match(ids, new RegExp(`${key}="?${value}"?`), `external_ids has ${key}=${value}`);
      const inside = await sh('ip', ['netns', 'exec', names[0]!, 'ethtool', '-k', 'eth0']);
      assert.match(inside.stdout, /tx-checksumming: off/, 'userspace datapath: TX checksum offload off in the pod');

      // Real packets through the switch (a learning switch here; OVN's flows on the rig): ping, and TCP, which fails
      // on the userspace datapath when the pod's TX checksum offload is on.
      const addressB = b.port.fixed_ips[0]!.ip_address;
      await waitFor('ping a → b', () => pingOnce(names[0]!, addressB), { timeoutMs: 20_000, intervalMs: 300 });
      assert.equal(await tcpOnce(names[1]!, names[0]!, addressB), 'hello from b');

      assert.deepEqual(await call({ ...a.env, CNI_COMMAND: 'CHECK' }, { ...a.conf, prevResult: a.result }), {
        exitCode: 0,
        body: undefined,
      });
      await ovs.vsctl('del-port', tap);
      const broken = failure(await call({ ...a.env, CNI_COMMAND: 'CHECK' }, { ...a.conf, prevResult: a.result }));
      assert.equal(broken.code, 103);
      assert.match(broken.msg, new RegExp(`${tap} is not a port of OVS bridge ${bridge}`));

      // DEL of another sandbox leaves b's port alone; b's own DEL removes it, and again is no error.
      const otherSandbox = { ...b.env, CNI_CONTAINERID: 'another-sandbox', CNI_COMMAND: 'DEL' };
      assert.equal((await call(otherSandbox, b.conf)).exitCode, 0);
      const tapB = tapName(b.port.id, 'rvo');
      assert.equal(await ovs.vsctl('port-to-br', tapB), `${bridge}\n`);
      for (let i = 0; i < 2; i++)
        assert.deepEqual(await call({ ...b.env, CNI_COMMAND: 'DEL' }, { ...b.conf, prevResult: b.result }), {
          exitCode: 0,
          body: undefined,
        });
      assert.equal((await ovs.vsctl('list-ports', bridge)).trim(), '');
      await assert.rejects(sh('ip', ['link', 'show', tapB]), /does not exist/);
    });
  });
});

/** One ping, answered within a second or not. */
async function pingOnce(netns: string, address: string): Promise<boolean> {
  return sh('ip', ['netns', 'exec', netns, 'ping', '-n', '-q', '-c', '1', '-W', '1', address], { timeout: 5000 }).then(
    () => true,
    () => false,
  );
}

/** A TCP exchange: a one-shot server in `serverNetns` says hello; the client in `clientNetns` reads it (bounded). */
async function tcpOnce(serverNetns: string, clientNetns: string, address: string): Promise<string> {
  const server = sh(
    'ip',
    [
      'netns',
      'exec',
      serverNetns,
      '/usr/bin/python3',
      '-c',
      'import socket\ns=socket.socket()\ns.settimeout(10)\ns.bind(("0.0.0.0",9090))\ns.listen()\nprint("up",flush=True)\n' +
        'c,_=s.accept()\nc.sendall(b"hello from b")\nc.close()',
    ],
    { timeout: 15_000 },
  );
  const client =
    'import socket,sys,time\nfor i in range(20):\n  try:\n    s=socket.create_connection((sys.argv[1],9090),timeout=2)\n' +
    '    print(s.recv(64).decode());break\n  except ConnectionRefusedError: time.sleep(0.2)';
  const answer = await sh('ip', ['netns', 'exec', clientNetns, '/usr/bin/python3', '-c', client, address], {
    timeout: 15_000,
  }).then(
    (r) => r.stdout.trim(),
    (err: unknown) => `no answer: ${String(err)}`,
  );
  await server.catch(() => undefined);
  return answer;
}
