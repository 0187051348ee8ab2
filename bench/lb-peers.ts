/**
 * What a pod or namespace change costs the Service module under NetworkPolicy: one look at what every member's
 * ingress policies admit (`PolicyModel.loadBalancerPeers`), in process over listers, no server (docs/policy.md, "Load
 * balancers (Octavia)").
 */
import { performance } from 'node:perf_hooks';
import type { Namespace, NetworkPolicy } from '../src/kube/api/index.ts';
import { PolicyModel, type PolicyPod } from '../src/reconcilers/index.ts';
import { ListLister } from '../test/support/netpol-model.ts';
import type { Row } from './support.ts';

const NAMESPACES = 10;
const PODS_PER_NAMESPACE = 100;
const APPS = ['web', 'api', 'db', 'cache', 'worker'];

export function benchLoadBalancerPeers(): Promise<Row[]> {
  const namespaces: Namespace[] = [];
  const pods: PolicyPod[] = [];
  const policies: NetworkPolicy[] = [];
  const ips = new Map<string, string>();
  for (let n = 0; n < NAMESPACES; n++) {
    const namespace = `ns${n}`;
    namespaces.push({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: namespace, labels: { team: `t${n % 5}` }, resourceVersion: '1' },
    });
    for (let i = 0; i < PODS_PER_NAMESPACE; i++) {
      const uid = `${namespace}-${i}`;
      pods.push({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { namespace, name: `p${i}`, uid, resourceVersion: '1', labels: { app: APPS[i % APPS.length]! } },
        spec: { nodeName: 'n', containers: [{ ports: [{ name: 'http', containerPort: 8080 }] }] },
      });
      // Scattered addresses: little for the aggregation to merge.
      ips.set(uid, `10.${n}.${Math.floor(i / 50)}.${(i % 50) * 3 + 1}`);
    }
    const meta = (name: string) => ({ namespace, name, resourceVersion: '1' });
    policies.push(
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: meta('deny'),
        spec: { podSelector: {}, policyTypes: ['Ingress'] },
      },
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: meta('web'),
        spec: {
          podSelector: { matchLabels: { app: 'web' } },
          ingress: [
            {
              from: [
                { podSelector: { matchLabels: { app: 'api' } } },
                { namespaceSelector: { matchLabels: { team: 't1' } }, podSelector: { matchLabels: { app: 'worker' } } },
              ],
              ports: [{ port: 'http' }],
            },
          ],
        },
      },
    );
  }
  const podLister = new ListLister(pods);
  const model = new PolicyModel({
    policies: new ListLister(policies),
    namespaces: new ListLister(namespaces),
    pods: podLister,
    nodes: new ListLister([]),
    wired: () => true,
    address: (p) => ips.get(p.metadata.uid ?? ''),
    loadBalancerCidrs: () => [],
    podFamilies: () => ['IPv4'],
  });
  // 1,000 members: every pod of the namespaces as if each were some Service's member on 8080.
  const look = () => {
    for (const pod of podLister.list()) model.loadBalancerPeers(pod, 8080, 'TCP');
  };
  const times: number[] = [];
  for (let round = 0; round < 6; round++) {
    // A pod change: the informer replaces one object, so every answer kept is stale.
    podLister.items = podLister.items.map((p, i) => (i === round ? { ...p } : p));
    const t0 = performance.now();
    look();
    times.push(performance.now() - t0);
  }
  const measured = times.slice(1).sort((a, b) => a - b);
  const p50 = measured[Math.floor(measured.length / 2)]!;
  return Promise.resolve([
    {
      benchmark: 'policies: load balancers, one look after a pod change',
      condition: `${pods.length} members, ${NAMESPACES} namespaces, ${policies.length} policies`,
      result: `${p50.toFixed(0)} ms (p50 of ${measured.length}; ${measured[0]!.toFixed(0)}–${measured[measured.length - 1]!.toFixed(0)})`,
    },
  ]);
}
