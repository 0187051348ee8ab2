/**
 * Issue 26, row 11: a NetworkPolicy change never denies, at any moment, what both the old and the new state allow.
 * Raven (`composeRaven`, warm pools on) on the embedded API server and the OpenStack simulator, with the truth table's
 * world (three namespaces × three pods, two nodes). Every case of the truth table is one walk of transitions: from no
 * policy to its policies, to its relabelled world and back where it has one, and to no policy again. The simulator
 * calls the test after every write it answers; at each one the test reads the state Neutron holds (groups, rules,
 * each port's groups) and evaluates, with Neutron's semantics, every cell that both ends of the current transition
 * allow: none may be denied in any state Raven's writes pass through. The real-packet proof is
 * test/dataplane/policy-transitions.test.ts.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import type { NetworkPolicy } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import type { ComposedRaven } from '../../../src/daemon/compose.ts';
import {
  allowedInBoth,
  baseWorld,
  compareMatrix,
  neutronAllows,
  podCellName,
  policyCases,
  PROBES,
  relabelSteps,
  type Endpoint,
  type NeutronRuleView,
  type NeutronView,
  type PodCell,
  type World,
} from '../../support/netpol.ts';
import { waitFor } from '../../support/wait.ts';
import { startEnv, wireTruthTableWorld, type Env } from './support.ts';

const CLUSTER = 'netpol-moves';
const CONVERGE_MS = 30_000;

describe(
  'NetworkPolicy transitions never deny what both states allow (simulator, every write)',
  { timeout: 600_000 },
  () => {
    let env: Env;
    let raven: { composed: ComposedRaven; stop(): Promise<void> } | undefined;
    const world = baseWorld();
    let portOf = new Map<string, string>();
    /** The transition under way: the cells both its ends allow, and what was found denied in between. */
    let watching: { name: string; cells: PodCell[] } | undefined;
    const denied: string[] = [];
    let writesSeen = 0;

    /** Neutron's state, read from the simulator's store in the middle of its answer to a write. */
    function storeView(): NeutronView {
      const { neutron } = env.sim.sim;
      const rules = new Map<string, NeutronRuleView[]>();
      for (const rule of neutron.securityGroupRules.values()) {
        const list = rules.get(rule.security_group_id) ?? [];
        list.push(rule as NeutronRuleView);
        rules.set(rule.security_group_id, list);
      }
      const ports = [...neutron.ports.values()].flatMap((p) =>
        p.fixed_ips.map((ip) => ({ ip: ip.ip_address, groups: p.security_groups })),
      );
      return { rules, ports };
    }

    function check(write: { method: string; path: string }): void {
      if (!watching || !write.path.startsWith('/network/')) return;
      writesSeen++;
      const view = storeView();
      const { neutron } = env.sim.sim;
      const side = (c: PodCell['src']) => ({
        ip: c.ip,
        groups: neutron.ports.get(portOf.get(`${c.namespace}/${c.name}`)!)?.security_groups ?? [],
      });
      for (const cell of watching.cells)
        if (!neutronAllows(view, side(cell.src), side(cell.dst), cell.probe))
          denied.push(`${watching.name}: ${podCellName(cell)} denied after ${write.method} ${write.path}`);
    }

    before(async () => {
      env = await startEnv(26_110);
      env.sim.sim.observeWrites(check);
      ({ raven, portOf } = await wireTruthTableWorld(env, CLUSTER, world));
    });
    after(async () => {
      await raven?.stop();
      await env?.stop();
    });

    /** The groups of the world's pods' ports, as one text: it stops changing once Raven is done narrowing. */
    const portGroups = () =>
      [...portOf.values()]
        .map((id) => `${id}:${env.sim.sim.neutron.ports.get(id)?.security_groups.join(',')}`)
        .join(' ');

    /** Waits until Neutron lets through exactly what Kubernetes allows in `w`, and the ports' groups stay put. */
    async function settled(w: World): Promise<void> {
      let last = '';
      let groups = '';
      try {
        await waitFor(
          'Neutron lets through exactly what Kubernetes allows, and is still',
          () => {
            const view = storeView();
            const side = (e: Endpoint) =>
              'pod' in e
                ? {
                    ip: e.pod.ip,
                    groups:
                      env.sim.sim.neutron.ports.get(portOf.get(`${e.pod.namespace}/${e.pod.name}`)!)?.security_groups ??
                      [],
                  }
                : { ip: e.ip };
            const result = compareMatrix(w, (src, dst, probe) => neutronAllows(view, side(src), side(dst), probe));
            last = result.matrix ?? '';
            const now = portGroups();
            const still = now === groups;
            groups = now;
            return result.mismatches === 0 && still;
          },
          { timeoutMs: CONVERGE_MS, intervalMs: 1_000 },
        );
      } catch (err) {
        assert.fail(`${String(err)}\n${last}`);
      }
    }

    /** Runs `change` with the cells both `from` and `to` allow watched at every write, until `to` holds. */
    async function transition(name: string, from: World, to: World, change: () => Promise<void>): Promise<void> {
      watching = { name, cells: allowedInBoth(from, to, PROBES) };
      try {
        await change();
        await settled(to);
      } finally {
        watching = undefined;
      }
    }

    for (const c of policyCases().filter((k) => k.policies.length > 0))
      it(c.name, async () => {
        const state = (policies: NetworkPolicy[]): World => ({ ...world, policies });
        await settled(state([]));
        // One policy at a time: each write is a transition of its own (between two, Kubernetes itself may deny more).
        for (const [i, p] of c.policies.entries())
          await transition(
            `${c.name}: ${p.metadata.name} created`,
            state(c.policies.slice(0, i)),
            state(c.policies.slice(0, i + 1)),
            async () => {
              await env.client.create(resources.networkpolicies, p, { namespace: p.metadata.namespace! });
            },
          );
        if (c.mutate) {
          const changed = structuredClone(world);
          c.mutate(changed);
          // One object's labels at a time, there and back: each write is a transition of its own.
          for (const [name, from, to] of [
            ['relabelled', world, changed],
            ['relabelled back', changed, world],
          ] as const) {
            let current: World = { ...from, policies: c.policies };
            for (const step of relabelSteps(from, to)) {
              const next: World = { ...step.world, policies: c.policies };
              await transition(`${c.name}: ${name}`, current, next, () => step.write(env.client));
              current = next;
            }
          }
        }
        for (const [i, p] of c.policies.entries())
          await transition(
            `${c.name}: ${p.metadata.name} deleted`,
            state(c.policies.slice(i)),
            state(c.policies.slice(i + 1)),
            async () => {
              await env.client.delete(resources.networkpolicies, p.metadata.name!, p.metadata.namespace);
            },
          );
        assert.deepEqual(denied.splice(0), [], 'no state Neutron passed through denied a cell both ends allow');
      });

    it('every transition was watched at Neutron writes', () => {
      assert.ok(writesSeen > 50, `${writesSeen} writes evaluated`);
    });
  },
);
