/**
 * Issue 16 with real packets: NetworkPolicies translated by Raven into security groups on the real Neutron (the
 * linuxbridge agent's iptables + ipset firewall, scripts/dataplane/rig.sh), probed between pod network namespaces.
 * The world is a small cut of the truth table's (`test/support/netpol.ts`: namespaces x, y, z with their labels; six
 * pods with TCP 80 and 81, UDP 80 and a named port `http` that is 80 on a and 81 on b); each case is one of the truth
 * table's, or built on the pods' real addresses (ipBlock with except). For every case, every ordered pair of pods and
 * every probe (TCP 80, TCP 81, UDP 80): Kubernetes' evaluator, written from the specification, says allow or deny,
 * and a real connection must agree — an allowed cell is answered by the responder with its pod name, a denied one
 * times out (bounded). The agent applies rules asynchronously, so each case polls whole sweeps until two in a row
 * agree (bounded), and prints when that happened after the policy write (between the start of the last disagreeing
 * sweep and the first agreeing one) and when Raven's `Translated` Event came. Removing a case's policies must open
 * everything again, timed the same way. Once the packets agree, the truth table's Neutron evaluator (the one the
 * simulator-backed tests rely on) reads the real Neutron's groups, rules and ports and must agree too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../support/node-test.ts';
import type { NetworkPolicy } from '../../src/kube/api/index.ts';
import { resources } from '../../src/kube/client/index.ts';
import {
  kubernetesAllows,
  neutronAllows,
  policy,
  policyCases,
  relabel,
  type NeutronView,
  type Probe,
  type World,
  type WorldPod,
} from '../support/netpol.ts';
import { plugWorld, podKey, policyProber, rigWorld, type Enforced } from '../support/dataplane-policy.ts';
import {
  readRig,
  recentLogs,
  skipWithoutRig,
  startDataplaneCluster,
  type DataplaneCluster,
} from '../support/dataplane.ts';
import { waitFor } from '../support/wait.ts';

/** Pods: the runtime plugs them once Raven made their ports (agent polls every 2 s). */
const RUNNING_MS = 90_000;
/** From a policy change to packets that agree: measured 1–3 s on the agent (docs/dataplane.md); generous bound. */
const ENFORCE_MS = 60_000;
/** A probe that gets no answer in this time counts as denied (Neutron drops; nothing is rejected). */
const PROBE_SECONDS = 1.5;
const PROBES: readonly Probe[] = [
  { protocol: 'TCP', port: 80 },
  { protocol: 'TCP', port: 81 },
  { protocol: 'UDP', port: 80 },
];

describe(
  'NetworkPolicy on the real dataplane: real packets agree with Kubernetes',
  { skip: skipWithoutRig, timeout: 900_000 },
  () => {
    let cluster: DataplaneCluster;
    let world: Omit<World, 'policies'>;
    let netnsOf = new Map<string, string>();
    const timings: string[] = [];

    before(async () => {
      const rig = await readRig();
      cluster = await startDataplaneCluster(rig!, { strategy: 'shared' });
      cluster.startRaven();
      world = rigWorld(rig!.host, ['x/a', 'x/b', 'x/c', 'y/a', 'y/b', 'z/c']);
      netnsOf = await plugWorld(cluster, world, RUNNING_MS);
    });
    after(async () => {
      if (timings.length > 0) console.log(`policy → packets enforced (dataplane):\n  ${timings.join('\n  ')}`);
      await cluster?.stop();
    });

    const prober = policyProber({
      netnsOf: (p) => netnsOf.get(podKey(p))!,
      probes: PROBES,
      probeSeconds: PROBE_SECONDS,
      timeoutMs: ENFORCE_MS,
      progress: () => cluster.progress(),
      explain: portGroups,
    });
    const { enforced } = prober;

    /**
     * The truth table's Neutron evaluator (`neutronAllows`, the one the simulator-backed tests trust) on the real
     * Neutron's groups, rules and ports: the cells where it disagrees with Kubernetes — and so with the packets, which
     * agree with Kubernetes when this is asked.
     */
    async function neutronReading(w: World): Promise<string[]> {
      const groups = await cluster.neutron.securityGroups.list({ tags: [`raven.cluster=${cluster.clusterId}`] });
      const ports = (await cluster.neutron.ports.list({})).flatMap((p) =>
        p.fixed_ips.map((ip) => ({ ip: ip.ip_address, groups: p.security_groups ?? [] })),
      );
      const view: NeutronView = { rules: new Map(groups.map((g) => [g.id, g.security_group_rules])), ports };
      const side = (pod: WorldPod) => ({ ip: pod.ip, groups: ports.find((p) => p.ip === pod.ip)?.groups ?? [] });
      const wrong: string[] = [];
      for (const src of w.pods)
        for (const dst of w.pods)
          for (const probe of src === dst ? [] : PROBES)
            if (
              neutronAllows(view, side(src), side(dst), probe) !==
              kubernetesAllows(w, { pod: src }, { pod: dst }, probe)
            )
              wrong.push(`${podKey(src)} → ${podKey(dst)} ${probe.protocol}/${probe.port}`);
      return wrong;
    }

    /** Seconds from `since` to Raven's Normal `Translated` Event on each of these policies (by uid). */
    async function translated(policies: NetworkPolicy[], since: number): Promise<number> {
      const uids = new Set(policies.map((p) => p.metadata.uid));
      await waitFor(
        `a Translated Event on ${policies.map((p) => p.metadata.name).join(', ')}`,
        async () => {
          const events = (await cluster.client.list(resources.events, {})).items;
          const done = new Set(events.filter((e) => e.reason === 'Translated').map((e) => e.involvedObject?.uid));
          return [...uids].every((u) => done.has(u));
        },
        {
          timeoutMs: ENFORCE_MS,
          intervalMs: 100,
          progress: () => cluster.progress(),
          explain: () => whyNotTranslated(uids),
        },
      );
      return (Date.now() - since) / 1000;
    }

    /**
     * For a timed-out wait: the policies' Events, each pod's port's groups in Neutron (by name), then what Raven logged
     * last (CI shows only the test output).
     */
    async function whyNotTranslated(uids: Set<string | undefined>): Promise<string> {
      const events = (await cluster.client.list(resources.events, {})).items
        .filter((e) => uids.has(e.involvedObject?.uid))
        .map((e) => `${e.involvedObject?.name} ${e.type} ${e.reason} ×${e.count ?? 1}: ${e.message}`);
      return `Events: ${events.join(' | ') || 'none'}\n${await portGroups()}\nRaven's last log lines:\n${recentLogs(40)}`;
    }

    /** Each pod's port's security groups in Neutron, by name. */
    async function portGroups(): Promise<string> {
      const groups = await cluster.neutron.securityGroups.list({ tags: [`raven.cluster=${cluster.clusterId}`] });
      const names = new Map(groups.map((g) => [g.id, g.name]));
      const ports = await cluster.neutron.ports.list({});
      const groupsOf = world.pods.map((pod) => {
        const port = ports.find((p) => p.fixed_ips.some((ip) => ip.ip_address === pod.ip));
        return `${podKey(pod)}: ${(port?.security_groups ?? []).map((id) => names.get(id) ?? id).join(', ')}`;
      });
      return `ports' groups in Neutron: ${groupsOf.join('; ')}`;
    }

    const s = (n: number) => `${n.toFixed(1)} s`;
    const window = (e: Enforced) => `${e.after.toFixed(1)}–${e.by.toFixed(1)} s`;

    it('without a policy every pod reaches every pod (TCP and UDP)', async () => {
      // Polled as every case is: a pod runs once raven-cni plugged it on its signed VIF, which can be before the
      // agent has wired the port's firewall (CI once saw one pod's UDP fail in a single sweep right after).
      const open = await enforced({ ...world, policies: [] }, Date.now());
      timings.push(`no policy: every cell open ${window(open)} after the pods ran`);
      assert.equal(open.cells, 6 * 5 * PROBES.length);
    });

    const names = [
      'default deny ingress in x',
      'allow from pod b AND namespace team=blue',
      'named port ingress (resolved per selected pod)',
      'egress to namespace z on UDP, and to pods of x',
      'several policies are a union',
      'label changes move pods in and out of selections',
    ];
    const cases = policyCases().filter((c) => names.includes(c.name));
    // Built on the real addresses: x accepts the pod range except y/a and z/c.
    cases.push({
      name: 'ipBlock with except (the pod range but two pods’ addresses)',
      policies: [],
    });

    for (const c of cases)
      it(c.name, async () => {
        const exceptions = world.pods.filter((p) => ['y/a', 'z/c'].includes(podKey(p))).map((p) => `${p.ip}/32`);
        const policies =
          c.policies.length > 0
            ? c.policies
            : [
                policy('x', 'block', {
                  podSelector: {},
                  ingress: [{ from: [{ ipBlock: { cidr: '10.251.0.0/16', except: exceptions } }] }],
                }),
              ];
        const written = Date.now();
        const created: NetworkPolicy[] = [];
        for (const p of policies)
          created.push(await cluster.client.create(resources.networkpolicies, p, { namespace: p.metadata.namespace! }));
        try {
          const [neutron, packets] = await Promise.all([
            translated(created, written),
            enforced({ ...world, policies }, written),
          ]);
          timings.push(
            `${c.name}: Translated ${s(neutron)}, packets agree ${window(packets)} ` +
              `(${packets.cells} cells, ${packets.denied} denied)`,
          );
          assert.ok(packets.denied > 0 && packets.denied < packets.cells, 'the case both allows and denies');
          assert.deepEqual(await neutronReading({ ...world, policies }), [], 'the Neutron evaluator on real Neutron');

          if (c.mutate) {
            const changed = structuredClone(world);
            c.mutate(changed);
            const relabelled = Date.now();
            await relabel(cluster.client, world, changed);
            const moved = await enforced({ ...changed, policies }, relabelled);
            assert.deepEqual(
              await neutronReading({ ...changed, policies }),
              [],
              'the Neutron evaluator, labels changed',
            );
            timings.push(`${c.name}: labels changed → packets agree ${window(moved)}`);
            const back = Date.now();
            await relabel(cluster.client, changed, world);
            const restored = await enforced({ ...world, policies }, back);
            timings.push(`${c.name}: labels back → packets agree ${window(restored)}`);
          }

          const removed = Date.now();
          for (const p of policies)
            await cluster.client.delete(resources.networkpolicies, p.metadata.name!, p.metadata.namespace);
          const open = await enforced({ ...world, policies: [] }, removed);
          timings.push(`${c.name}: policies deleted → all open ${window(open)}`);
        } catch (err) {
          // Not left to fail the next cases too: this case's policies go (each may be gone already).
          for (const p of created)
            await cluster.client
              .delete(resources.networkpolicies, p.metadata.name!, p.metadata.namespace)
              .catch(() => {});
          throw err;
        }
      });
  },
);
