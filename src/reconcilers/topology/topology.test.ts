import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { FakeClock } from '../../core/index.ts';
import type { Namespace, NetworkPolicy, Service } from '../../kube/api/index.ts';
import { indexByNamespace, Store } from '../../kube/cache/index.ts';
import type { CachedPod, PodModuleView, RecordedPort } from '../pod/index.ts';
import type { PolicyGroup } from '../policy/index.ts';
import { topologySource, type TopologyInputs } from './topology.ts';

const TARGET = 'sg-target';

function port(id: string, deviceId: string, securityGroups: string[]): RecordedPort {
  return {
    id,
    deviceId,
    name: id,
    networkId: 'net',
    mac: 'fa:16:3e:00:00:01',
    fixedIps: [{ subnetId: 'subnet', address: '10.0.0.1' }],
    active: true,
    hostId: 'node-1',
    plug: 'bridge',
    securityGroups,
    revision: 1,
    updatedAt: 0,
  };
}

/** Namespace `shop`: pods web-1 and web-2 whose ports carry the policy's group, and a free pool port that does too. */
function inputs(policyModule: TopologyInputs['policyModule']): TopologyInputs {
  const namespaces = new Store<Namespace>();
  const pods = new Store<CachedPod>({ indexers: { byNamespace: indexByNamespace } });
  const policies = new Store<NetworkPolicy>({ indexers: { byNamespace: indexByNamespace } });
  namespaces.add({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop', uid: 'ns' } });
  const ports = new Map<string, RecordedPort>();
  for (const name of ['web-1', 'web-2']) {
    pods.add({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'shop', uid: name }, spec: {}, status: {} });
    ports.set(name, port(`port-${name}`, name, [TARGET]));
  }
  // Free in a warm pool of the set: it carries the set's groups, and is no pod's.
  const pooled = port('port-free', 'gone-pod', [TARGET]);
  policies.add({
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'web', namespace: 'shop', uid: 'policy' },
    spec: { podSelector: {}, policyTypes: ['Ingress'] },
  });
  const podModule: PodModuleView = {
    portOf: (uid) => {
      const p = ports.get(uid);
      return p && { port: p, warm: false, claimPending: false };
    },
    pools: () => [],
    ports: () => [...ports.values(), pooled],
  };
  return {
    clusterId: 'c',
    subnetStrategy: 'namespace',
    externalNetworkId: undefined,
    cluster: { current: () => undefined, whenReady: () => Promise.resolve(undefined), recheck: () => undefined },
    namespaces,
    pods,
    services: new Store<Service>({ indexers: { byNamespace: indexByNamespace } }),
    policies,
    networks: { all: () => [] },
    podModule,
    policyModule,
    events: { latest: () => undefined },
    clock: new FakeClock(0),
  };
}

describe('topologySource: a NetworkPolicy and its security groups', () => {
  const groups: PolicyGroup[] = [
    { id: 't', role: 'target', description: 'pods all of namespace shop', rules: 2, neutronId: TARGET },
    { id: 'p', role: 'peer', description: 'pods role=client of namespace shop', rules: 0 },
  ];
  const policyModule = {
    groups: () => [{ id: 't', neutronId: TARGET, name: 'raven/c/sg/t', rules: 2 }],
    policyGroups: (key: string) => (key === 'shop/web' ? groups : []),
  };

  it("shows each group with its rules and member pods (a free pool port carrying it is no member); the policy's detail is its groups", () => {
    const source = topologySource(inputs(policyModule));
    const snap = source.snapshot();
    assert.deepEqual(snap.namespaces[0]?.policies[0]?.groups, [
      { ...groups[0], members: 2 },
      { ...groups[1], members: 0 },
    ]);
    assert.equal(snap.securityGroups[0]?.members, 2);
    assert.deepEqual(source.detail('networkpolicy', 'shop', 'web')?.record, groups);
  });

  it('has no groups on a policy while the NetworkPolicy translation is off', () => {
    const snap = topologySource(inputs(undefined)).snapshot();
    assert.equal(snap.namespaces[0]?.policies[0]?.name, 'web');
    assert.equal(snap.namespaces[0]?.policies[0]?.groups, undefined);
    assert.deepEqual(snap.securityGroups, []);
  });
});
