/**
 * Issue 16, end to end: Raven (`composeRaven`, as `raven run` builds it, warm pools on) on the embedded API server and
 * the OpenStack simulator. The truth-table world (three namespaces × three pods, two nodes) is created for real; each
 * policy case is applied with the Kubernetes API, and the state Neutron then holds — security groups, their rules and
 * each pod port's groups, read through Neutron's public API — must let through exactly what Kubernetes' evaluator
 * (written from the specification, `test/support/netpol.ts`) allows, on every cell.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import type { NetworkPolicy } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import type { ComposedRaven } from '../../../src/daemon/compose.ts';
import { ownerOf } from '../../../src/reconcilers/index.ts';
import {
  baseWorld,
  compareMatrix,
  neutronAllows,
  policyCases,
  relabel as relabelWorld,
  type Endpoint,
  type NeutronView,
  type World,
} from '../../support/netpol.ts';
import { waitFor } from '../../support/wait.ts';
import { startEnv, wireTruthTableWorld, type Env } from './support.ts';

const CLUSTER = 'netpol';
const CONVERGE_MS = 30_000;

describe('NetworkPolicy → security groups, end to end', { timeout: 600_000 }, () => {
  let env: Env;
  let raven: { composed: ComposedRaven; stop(): Promise<void> } | undefined;
  const world = baseWorld();
  /** Each pod's port, once wired: its real address replaces the world's. */
  let portOf = new Map<string, string>();

  before(async () => {
    env = await startEnv(16_160);
    ({ raven, portOf } = await wireTruthTableWorld(env, CLUSTER, world));
  });
  after(async () => {
    await raven?.stop();
    await env.stop();
  });

  /** Neutron's state through its API: this cluster's groups with their rules, and every port's groups. */
  async function neutronView(): Promise<{ view: NeutronView; groupsOfPort: Map<string, string[]> }> {
    const groups = await env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`] });
    const ports = await env.neutron.ports.list({});
    return {
      view: {
        rules: new Map(groups.map((g) => [g.id, g.security_group_rules])),
        ports: ports.flatMap((p) => p.fixed_ips.map((ip) => ({ ip: ip.ip_address, groups: p.security_groups ?? [] }))),
      },
      groupsOfPort: new Map(ports.map((p) => [p.id, [...(p.security_groups ?? [])]])),
    };
  }

  /** Compares the two evaluators on every cell until they agree (Raven converging), or fails with the matrix. */
  async function converges(w: World): Promise<number> {
    let last = '';
    try {
      return await waitFor(
        'Neutron lets through exactly what Kubernetes allows',
        async () => {
          const { view, groupsOfPort } = await neutronView();
          const side = (e: Endpoint) =>
            'pod' in e
              ? { ip: e.pod.ip, groups: groupsOfPort.get(portOf.get(`${e.pod.namespace}/${e.pod.name}`)!) ?? [] }
              : { ip: e.ip };
          const result = compareMatrix(w, (src, dst, probe) => neutronAllows(view, side(src), side(dst), probe));
          last = result.matrix ?? '';
          return result.mismatches === 0 ? result.cells : undefined;
        },
        { timeoutMs: CONVERGE_MS },
      );
    } catch (err) {
      assert.fail(`${String(err)}\n${last}`);
    }
  }

  const apply = async (policies: NetworkPolicy[]) => {
    for (const p of policies)
      await env.client.create(resources.networkpolicies, p, { namespace: p.metadata.namespace! });
  };
  const remove = async (policies: NetworkPolicy[]) => {
    for (const p of policies)
      await env.client.delete(resources.networkpolicies, p.metadata.name!, p.metadata.namespace);
  };

  it('without a policy every pod is open, in groups Raven owns and tags', async () => {
    assert.ok((await converges({ ...world, policies: [] })) > 100);
    const groups = await env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`] });
    for (const g of groups) {
      const owner = ownerOf(g.tags);
      assert.equal(owner?.kind, 'securitygroup', g.name);
      assert.match(owner?.uid ?? '', /^[0-9a-f]{16}$/);
      assert.ok(g.name.startsWith(`raven/${CLUSTER}/sg/`), g.name);
    }
    const names = groups.map((g) => g.name).sort();
    assert.ok(names.includes(`raven/${CLUSTER}/sg/open-ingress`) && names.includes(`raven/${CLUSTER}/sg/open-egress`));
    const { groupsOfPort } = await neutronView();
    const open = groups
      .filter((g) => g.name.includes('/sg/open-'))
      .map((g) => g.id)
      .sort();
    for (const [key, port] of portOf) assert.deepEqual([...groupsOfPort.get(port)!].sort(), open, key);
  });

  const relabel = (from: Omit<World, 'policies'>, to: Omit<World, 'policies'>) => relabelWorld(env.client, from, to);

  const cases = policyCases().filter((c) => c.policies.length > 0);
  let cells = 0;
  for (const c of cases) {
    it(c.name, async () => {
      await apply(c.policies);
      cells += await converges({ ...world, policies: c.policies });
      if (c.mutate) {
        // Labels change on the live objects: pods and namespaces move in and out of the groups; then back.
        const changed = structuredClone(world);
        c.mutate(changed);
        await relabel(world, changed);
        cells += await converges({ ...changed, policies: c.policies });
        await relabel(changed, world);
      }
      await remove(c.policies);
    });
  }

  it('hundreds of cells agreed; with every policy gone only the base and node groups are left', async () => {
    assert.ok(cells > 1_000, `${cells} cells`);
    await converges({ ...world, policies: [] });
    await waitFor('the policy groups deleted', async () => {
      const names = (await env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`] })).map((g) => g.name);
      return names.every((n) => /\/sg\/(open-(ingress|egress)|node\/.*)$/.test(n)) ? names : undefined;
    });
  });

  it('a policy gets a Translated Event once Neutron holds it, its groups, rules and pod ports', async () => {
    const good: NetworkPolicy = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { namespace: 'z', name: 'good' },
      spec: { podSelector: {}, ingress: [{ from: [{ podSelector: {} }] }] },
    };
    await apply([good]);
    const event = (name: string, reason: string) =>
      waitFor(`${reason} on ${name}`, async () =>
        (await env.client.list(resources.events, { namespace: 'z' })).items.find(
          (e) =>
            (e as { reason?: string }).reason === reason &&
            (e as { involvedObject?: { name?: string } }).involvedObject?.name === name,
        ),
      );
    const translated = (await event('good', 'Translated')) as { message?: string };
    assert.match(translated.message ?? '', /security group\(s\) with \d+ rule\(s\); 3 pod port\(s\) carry them/);
    await remove([good]);
  });
});
