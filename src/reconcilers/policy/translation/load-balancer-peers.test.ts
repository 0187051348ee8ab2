import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import {
  baseWorld,
  ingressAllows,
  OUTSIDE,
  policy,
  policyCases,
  PROBES,
  type Endpoint,
  type World,
} from '../../../../test/support/netpol.ts';
import { modelOf } from '../../../../test/support/netpol-model.ts';
import { cidrContains, formatCidr, parseIp } from '../../../core/index.ts';
import type { AdmittedPeers } from './load-balancer-peers.ts';

const admits = (peers: AdmittedPeers, ip: string): boolean =>
  peers.everyone || peers.cidrs.some((c) => cidrContains(c, parseIp(ip)!));

/** Sources a load balancer may pass on: every pod of the world and hosts outside it (a node's own is not one). */
const sources = (world: World): Endpoint[] => [
  ...world.pods.map((pod) => ({ pod })),
  OUTSIDE,
  { ip: '10.0.9.9', label: 'unused pod address' },
  { ip: '10.0.1.200', label: 'x range, no pod' },
];

describe('admittedPeers: what a load balancer may pass to a pod is what its ingress policies admit', () => {
  let cells = 0;
  for (const c of policyCases()) {
    it(c.name, () => {
      const world: World = { ...baseWorld(), policies: c.policies };
      const m = modelOf(world);
      const check = () => {
        for (const dst of world.pods) {
          const pod = m.listers.pods.get(`${dst.namespace}/${dst.name}`)!;
          for (const probe of PROBES) {
            const peers = m.model.loadBalancerPeers(pod, probe.port, probe.protocol);
            for (const src of sources(world)) {
              const ip = 'pod' in src ? src.pod.ip : src.ip;
              const want = ingressAllows(world, dst, src, probe);
              const shown = peers.everyone ? 'everyone' : peers.cidrs.map(formatCidr).join(',');
              assert.equal(
                admits(peers, ip),
                want,
                `${dst.namespace}/${dst.name} ${probe.protocol}/${probe.port} from ${ip}: [${shown}]`,
              );
              cells++;
            }
          }
        }
      };
      check();
      if (c.mutate) {
        c.mutate(world);
        m.load(world);
        check();
      }
    });
  }
  it('covers thousands of cells', () => assert.ok(cells > 2_000, `${cells} cells`));

  it('aggregates the selected pods into the fewest CIDRs, and answers no policy with everyone', () => {
    const world: World = {
      ...baseWorld(),
      policies: [
        policy('x', 'from-web', {
          podSelector: { matchLabels: { pod: 'a' } },
          ingress: [{ from: [{ namespaceSelector: {}, podSelector: { matchLabels: { app: 'web' } } }] }],
        }),
      ],
    };
    // Pods a and b of each namespace are .10 and .11: each namespace's pair is one /31.
    const m = modelOf(world);
    const target = m.listers.pods.get('x/a')!;
    const peers = m.model.loadBalancerPeers(target, 80, 'TCP');
    assert.deepEqual(peers.everyone ? 'everyone' : peers.cidrs.map(formatCidr), [
      '10.0.1.10/31',
      '10.0.2.10/31',
      '10.0.3.10/31',
    ]);
    assert.deepEqual(m.model.loadBalancerPeers(m.listers.pods.get('x/b')!, 80, 'TCP'), { everyone: true });
  });

  it('a policy that admits nothing on the port gives an empty list, and one Raven cannot read admits no one', () => {
    const world: World = {
      ...baseWorld(),
      policies: [
        policy('x', 'only-81', {
          podSelector: { matchLabels: { pod: 'a' } },
          ingress: [{ ports: [{ port: 81 }] }],
        }),
        policy('y', 'bad', {
          podSelector: {},
          ingress: [{ from: [{ ipBlock: { cidr: 'not-a-cidr' } }] }],
        }),
      ],
    };
    const m = modelOf(world);
    assert.deepEqual(m.model.loadBalancerPeers(m.listers.pods.get('x/a')!, 80, 'TCP'), { everyone: false, cidrs: [] });
    assert.deepEqual(m.model.loadBalancerPeers(m.listers.pods.get('x/a')!, 81, 'TCP'), { everyone: true });
    assert.deepEqual(m.model.loadBalancerPeers(m.listers.pods.get('y/a')!, 80, 'TCP'), { everyone: false, cidrs: [] });
  });
});
