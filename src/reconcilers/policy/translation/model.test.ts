import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import {
  baseWorld,
  compareMatrix,
  neutronAllows,
  policyCases,
  type Endpoint,
  type World,
} from '../../../../test/support/netpol.ts';
import { modelOf, viewOf } from '../../../../test/support/netpol-model.ts';
import type { NetworkPolicy } from '../../../kube/api/index.ts';
import { groupId, groupKey } from './groups.ts';
import { PolicyModel } from './model.ts';
import type { DesiredGroup } from './objects.ts';

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

  it('pods with equal groups share one list of their keys (10,000 pods hold a few lists, not 10,000)', () => {
    const m = modelOf({ ...baseWorld(), policies: [fromY] });
    const pods = m.listers.pods.list();
    const groupsOf = (ns: string, name: string) =>
      m.model.podGroups(pods.find((p) => p.metadata.namespace === ns && p.metadata.name === name)!);
    assert.deepEqual(groupsOf('y', 'a'), groupsOf('y', 'c'));
    assert.equal(groupsOf('y', 'a'), groupsOf('y', 'c'));
    assert.equal(groupsOf('z', 'a'), groupsOf('z', 'b'));
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

describe('PolicyModel.groups(): kept while what it is made of is unchanged', () => {
  const policy = (name: string, spec: NetworkPolicy['spec'], namespace = 'y'): NetworkPolicy => ({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { namespace, name },
    spec,
  });
  /** A model whose pods' addresses and load balancers' CIDRs the test changes. */
  const setUp = (policies: NetworkPolicy[]) => {
    const world: World = { ...baseWorld(), policies };
    const { listers } = modelOf(world);
    const addresses = new Map(world.pods.map((p) => [`${p.namespace}/${p.name}`, p.ip]));
    const loadBalancers: string[] = [];
    const model = new PolicyModel({
      ...listers,
      wired: () => true,
      address: (pod) => addresses.get(`${pod.metadata.namespace}/${pod.metadata.name}`),
      loadBalancerCidrs: () => loadBalancers,
      podFamilies: () => ['IPv4'],
    });
    /** Replaces a cached object with an edited copy, as an informer's store does on a change. */
    const replace = <T extends { metadata: { name?: string; namespace?: string } }>(
      items: T[],
      key: string,
      edit: (copy: T) => void,
    ): void => {
      const i = items.findIndex((o) => [o.metadata.namespace, o.metadata.name].filter(Boolean).join('/') === key);
      const copy = structuredClone(items[i]!);
      edit(copy);
      items[i] = copy;
    };
    return { model, listers, addresses, loadBalancers, replace };
  };
  const numbersOf = (groups: ReadonlyMap<string, DesiredGroup>) =>
    [...groups.values()]
      .flatMap((g) => (g.spec.kind !== 'open' && g.spec.kind !== 'node' && g.spec.port ? [g.spec.port.number] : []))
      .sort();
  const namedIngress = policy('named', { podSelector: {}, ingress: [{ ports: [{ port: 'http' }] }] });

  it('answers the same object while nothing changed, even when every pod object was replaced by an equal one', () => {
    const { model, listers } = setUp([namedIngress]);
    const first = model.groups();
    assert.equal(model.groups(), first);
    // A pod's annotation written (a new object, same labels and ports): its groups cannot change.
    listers.pods.items = listers.pods.items.map((p) => structuredClone(p));
    assert.equal(model.groups(), first);
  });

  it("is made again when a pod's named port resolves to another number", () => {
    const { model, listers, replace } = setUp([namedIngress]);
    assert.deepEqual(numbersOf(model.groups()), [80, 81]);
    replace(listers.pods.items, 'y/b', (pod) => {
      pod.spec.containers![0]!.ports!.find((p) => p.name === 'http')!.containerPort = 82;
    });
    assert.deepEqual(numbersOf(model.groups()), [80, 82]);
  });

  it("is made again when a namespace's labels move pods into a named port's destinations", () => {
    const egress = policy('to-red', {
      podSelector: {},
      policyTypes: ['Egress'],
      egress: [{ to: [{ namespaceSelector: { matchLabels: { team: 'red' } } }], ports: [{ port: 'http' }] }],
    });
    const { model, listers, replace } = setUp([egress]);
    assert.deepEqual(numbersOf(model.groups()), []);
    replace(listers.namespaces.items, 'z', (ns) => (ns.metadata.labels = { ...ns.metadata.labels, team: 'red' }));
    assert.deepEqual(numbersOf(model.groups()), [80, 81]);
  });

  it("is made again when a pod's address moves into an ipBlock with a named port", () => {
    const egress = policy('to-block', {
      podSelector: {},
      policyTypes: ['Egress'],
      egress: [{ to: [{ ipBlock: { cidr: '10.9.0.0/16' } }], ports: [{ port: 'http' }] }],
    });
    const { model, addresses } = setUp([egress]);
    assert.deepEqual(numbersOf(model.groups()), []);
    addresses.set('x/b', '10.9.0.5');
    assert.deepEqual(numbersOf(model.groups()), [81]);
  });

  it("is made again when a node's address, the load balancers' CIDRs or a policy change", () => {
    const { model, listers, loadBalancers, replace } = setUp([namedIngress]);
    const nodeRules = () =>
      [...model.groups().values()]
        .find((g) => g.spec.kind === 'node' && g.spec.node === 'node-1')!
        .rules.map((r) => r.remotePrefix)
        .sort();
    assert.deepEqual(nodeRules(), ['192.168.0.1/32', '192.168.0.1/32']);
    replace(listers.nodes.items, 'node-1', (node) => (node.status!.addresses![0]!.address = '192.168.0.9'));
    assert.deepEqual(nodeRules(), ['192.168.0.9/32', '192.168.0.9/32']);
    loadBalancers.push('10.96.0.0/24');
    assert.deepEqual(nodeRules(), ['10.96.0.0/24', '192.168.0.9/32', '192.168.0.9/32']);
    const before = model.groups();
    listers.policies.items = [
      ...listers.policies.items,
      { ...namedIngress, metadata: { namespace: 'x', name: 'n2', resourceVersion: 'p2' } },
    ];
    assert.notEqual(model.groups(), before);
    assert.ok([...model.groups().values()].some((g) => g.key.startsWith('pods|ns=x|pods=|port=')));
  });
});
