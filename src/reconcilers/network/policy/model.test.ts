import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  baseWorld,
  compareMatrix,
  neutronAllows,
  policyCases,
  type Endpoint,
  type World,
} from '../../../../test/support/netpol.ts';
import { modelOf, viewOf } from '../../../../test/support/netpol-model.ts';
import { groupId, groupKey } from './groups.ts';

/** The model's Neutron view against Kubernetes' evaluator, on every cell of a world. */
function check(world: World, m = modelOf(world)): { cells: number; groupsOf: Map<string, string[]> } {
  const { view, groupsOf } = viewOf(m.model, m.listers.pods.list(), (pod) => {
    return world.pods.find((p) => p.namespace === pod.metadata.namespace && p.name === pod.metadata.name)!.ip;
  });
  const side = (e: Endpoint) =>
    'pod' in e ? { ip: e.pod.ip, groups: groupsOf.get(`${e.pod.namespace}/${e.pod.name}`)! } : { ip: e.ip };
  const result = compareMatrix(world, (src, dst, probe) => neutronAllows(view, side(src), side(dst), probe));
  assert.equal(result.mismatches, 0, `${result.mismatches} of ${result.cells} cells differ:\n${result.matrix}`);
  return { cells: result.cells, groupsOf };
}

describe('PolicyModel: the translation agrees with Kubernetes on every cell', () => {
  let total = 0;
  for (const c of policyCases()) {
    it(c.name, () => {
      const world: World = { ...baseWorld(), policies: c.policies };
      const m = modelOf(world);
      total += check(world, m).cells;
      if (c.mutate) {
        // The same model after the caches changed: labels move pods in and out of selections.
        c.mutate(world);
        m.load(world);
        total += check(world, m).cells;
      }
    });
  }
  it('every case together (a union across namespaces), and hundreds of cells in all', () => {
    const world: World = {
      ...baseWorld(),
      policies: policyCases().flatMap((c, i) =>
        c.policies.map((p) => ({ ...p, metadata: { ...p.metadata, name: `${p.metadata.name}-${i}` } })),
      ),
    };
    total += check(world).cells;
    assert.ok(total > 5_000, `${total} cells`);
  });
  it('the table is not vacuous: an all-open or all-closed Neutron disagrees with every case but the trivial', () => {
    for (const c of policyCases().slice(1)) {
      const world: World = { ...baseWorld(), policies: c.policies };
      assert.ok(compareMatrix(world, () => true).mismatches > 0, c.name);
      assert.ok(compareMatrix(world, () => false).mismatches > 0, c.name);
    }
  });
});

describe('PolicyModel: membership, not addresses', () => {
  const deny = (ns: string) => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { namespace: ns, name: 'deny' },
    spec: { podSelector: {}, policyTypes: ['Ingress' as const] },
  });
  const fromY = {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { namespace: 'x', name: 'from-y' },
    spec: { podSelector: {}, ingress: [{ from: [{ namespaceSelector: { matchLabels: { ns: 'y' } } }] }] },
  };

  it('a pod no policy selects carries the open groups; an isolated one its node group instead of open ingress', () => {
    const world: World = { ...baseWorld(), policies: [deny('x')] };
    const { groupsOf } = check(world);
    const open = (d: 'ingress' | 'egress') => groupId(groupKey({ kind: 'open', direction: d }));
    assert.ok(groupsOf.get('y/a')!.includes(open('ingress')) && groupsOf.get('y/a')!.includes(open('egress')));
    const xa = groupsOf.get('x/a')!;
    assert.ok(!xa.includes(open('ingress')) && xa.includes(open('egress')));
    assert.ok(xa.includes(groupId(groupKey({ kind: 'node', node: 'node-1' }))));
  });

  it('more pods change memberships only: the rules stay as they were', () => {
    const world: World = { ...baseWorld(), policies: [fromY] };
    const m = modelOf(world);
    const rules = () => new Map([...m.model.groups()].map(([id, g]) => [id, JSON.stringify(g.rules)] as const));
    const before = rules();
    const more = { ...world, pods: [...world.pods] };
    for (let i = 0; i < 20; i++) more.pods.push({ ...world.pods[3]!, name: `extra-${i}`, ip: `10.0.2.${100 + i}` });
    m.load(more);
    assert.deepEqual(rules(), before);
    check(more, m);
  });

  it('equal selectors in several policies share one group', () => {
    const twice = { ...fromY, metadata: { namespace: 'x', name: 'from-y-again' } };
    const world: World = { ...baseWorld(), policies: [fromY, twice] };
    const one = modelOf({ ...world, policies: [fromY] }).model.groups();
    const two = modelOf(world).model.groups();
    assert.deepEqual([...two.keys()].sort(), [...one.keys()].sort());
  });

  it('an ipBlock except becomes the complement of the block; a membership rule references a group', () => {
    const world: World = {
      ...baseWorld(),
      policies: [
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { namespace: 'x', name: 'block' },
          spec: {
            podSelector: {},
            ingress: [
              { from: [{ ipBlock: { cidr: '10.0.0.0/16', except: ['10.0.2.0/24'] } }] },
              { from: [{ namespaceSelector: { matchLabels: { ns: 'z' } } }] },
            ],
          },
        },
      ],
    };
    const groups = [...modelOf(world).model.groups().values()];
    const target = groups.find((g) => g.spec.kind === 'pods' && g.rules.length > 0)!;
    const prefixes = target.rules.flatMap((r) => (r.remotePrefix ? [r.remotePrefix] : [])).sort();
    assert.deepEqual(prefixes, [
      '10.0.0.0/23',
      '10.0.128.0/17',
      '10.0.16.0/20',
      '10.0.3.0/24',
      '10.0.32.0/19',
      '10.0.4.0/22',
      '10.0.64.0/18',
      '10.0.8.0/21',
    ]);
    assert.equal(target.rules.filter((r) => r.remoteGroup).length, 1);
  });

  it('a policy Raven cannot read isolates its pods with none of its rules (fail closed) and says why', () => {
    const bad = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { namespace: 'x', name: 'bad' },
      spec: { podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: 'not-a-cidr' } }] }] },
    };
    const m = modelOf({ ...baseWorld(), policies: [bad] });
    assert.match(m.model.errors().get('x/bad')?.message ?? '', /ipBlock\.cidr/);
    const pod = m.listers.pods.get('x/a')!;
    assert.ok(!m.model.podGroups(pod).includes(groupKey({ kind: 'open', direction: 'ingress' })));
  });

  it('a named port that resolves to different numbers gives one group per number', () => {
    const world: World = {
      ...baseWorld(),
      policies: [
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: { namespace: 'y', name: 'named' },
          spec: { podSelector: {}, ingress: [{ ports: [{ port: 'http' }] }] },
        },
      ],
    };
    const m = modelOf(world);
    const perNumber = [...m.model.groups().values()].filter((g) => g.spec.kind === 'pods' && g.spec.port);
    assert.deepEqual(perNumber.map((g) => (g.spec.kind === 'pods' ? g.spec.port?.number : 0)).sort(), [80, 81]);
    check(world, m);
  });
});
