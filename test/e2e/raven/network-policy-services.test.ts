/**
 * Egress policies and Services with Raven's load balancers (here every Service, `emulateKubeProxy`): Kubernetes
 * applies NetworkPolicy after kube-proxy's DNAT, so a pod allowed to reach the DNS pods reaches them through the DNS
 * Service's clusterIP. With Raven that clusterIP is an Octavia VIP, so the egress rule to the DNS pods must also allow
 * the VIP on the Service's port — and only for Services whose port sends to an allowed pod on an allowed port. Read
 * back through the OpenStack simulator's Neutron API.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import type { KubeObject, Service } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import { waitFor } from '../../support/wait.ts';
import { composeInProcess, ravenSettings, startEnv, type Env } from './support.ts';

const CLUSTER = 'netpol-svc';

const pod = (namespace: string, name: string, labels: Record<string, string>): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, labels },
  spec: {
    nodeName: 'node-1',
    containers: [
      {
        name: 'c',
        image: 'dns',
        ports: [
          { name: 'dns', containerPort: 5353, protocol: 'UDP' },
          { name: 'http', containerPort: 8080 },
        ],
      },
    ],
  },
});

const service = (name: string, app: string, ports: NonNullable<Service['spec']>['ports']): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'dns' },
  spec: { selector: { app }, ports },
});

describe('egress NetworkPolicy to pods behind load-balanced Services', { timeout: 120_000 }, () => {
  let env: Env;
  let raven: { stop(): Promise<void> } | undefined;
  const clusterIP: Record<string, string> = {};

  /** Every egress rule to a single address in Raven's groups, as `proto port → address`. */
  const vipRules = async (): Promise<string[]> => {
    const groups = await env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`] });
    return groups
      .flatMap((g) => g.security_group_rules ?? [])
      .filter((r) => r.direction === 'egress' && r.remote_ip_prefix?.endsWith('/32'))
      .map((r) => `${r.protocol} ${r.port_range_min}-${r.port_range_max} → ${r.remote_ip_prefix}`)
      .sort();
  };

  before(async () => {
    env = await startEnv(16_170);
    await env.client.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
    for (const [name, team] of [
      ['dns', 'infra'],
      ['app', 'apps'],
    ] as const)
      await env.client.create(resources.namespaces, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: { team } },
      });
    raven = await composeInProcess(
      env,
      loadRavenConfig({
        env: { ...ravenSettings(CLUSTER, 'namespace'), RAVEN_EMULATE_KUBE_PROXY: 'true', RAVEN_PORT_POOLS: 'false' },
      }),
    );
    await env.client.create(resources.pods, pod('dns', 'resolver', { app: 'dns' }), { namespace: 'dns' });
    await env.client.create(resources.pods, pod('dns', 'web', { app: 'web' }), { namespace: 'dns' });
    await env.client.create(resources.pods, pod('app', 'client', { app: 'client' }), { namespace: 'app' });
    for (const [name, app] of [
      ['dns', 'dns'],
      ['web', 'web'],
    ] as const) {
      const created = await env.client.create(
        resources.services,
        service(name, app, [
          { name: 'dns', port: 53, protocol: 'UDP', targetPort: 'dns' },
          { name: 'http', port: 80, targetPort: 8080 },
        ]),
        { namespace: 'dns' },
      );
      clusterIP[name] = created.spec!.clusterIP!;
    }
    // The client may send DNS (UDP 5353 on the resolver pods, named `dns`) and nothing else.
    await env.client.create(
      resources.networkpolicies,
      {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'NetworkPolicy',
        metadata: { name: 'dns-only', namespace: 'app' },
        spec: {
          podSelector: {},
          policyTypes: ['Egress'],
          egress: [
            {
              to: [
                { namespaceSelector: { matchLabels: { team: 'infra' } }, podSelector: { matchLabels: { app: 'dns' } } },
              ],
              ports: [{ protocol: 'UDP', port: 'dns' }],
            },
          ],
        },
      },
      { namespace: 'app' },
    );
  });
  after(async () => {
    await raven?.stop();
    await env.stop();
  });

  it("allows the DNS Service's VIP on UDP 53 (its port sends to an allowed pod's named port), not its HTTP port, not the other Service", async () => {
    const expected = [`udp 53-53 → ${clusterIP.dns}/32`];
    await waitFor('the VIP rule', async () => JSON.stringify(await vipRules()) === JSON.stringify(expected), {
      timeoutMs: 30_000,
    });
    assert.deepEqual(await vipRules(), expected);
  });

  it("follows the Service: a targetPort the policy does not allow takes the VIP's rule away, and back", async () => {
    const patch = (targetPort: number | string) =>
      env.client.patch(
        resources.services,
        'dns',
        'dns',
        [{ op: 'replace', path: '/spec/ports/0/targetPort', value: targetPort }],
        'json',
      );
    await patch(5354);
    await waitFor('no VIP rule', async () => (await vipRules()).length === 0, { timeoutMs: 30_000 });
    await patch('dns');
    await waitFor('the VIP rule again', async () => (await vipRules()).length === 1, { timeoutMs: 30_000 });
    await env.client.delete(resources.services, 'dns', 'dns');
    await waitFor('no VIP rule once the Service is gone', async () => (await vipRules()).length === 0, {
      timeoutMs: 30_000,
    });
  });
});
