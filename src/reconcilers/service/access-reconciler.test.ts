/**
 * The service reconciler under NetworkPolicy, against the OpenStack simulator: what the members' policies admit (here
 * the policy module's answer given by the test; the whole chain runs in test/e2e/raven/network-policy-load-balancers)
 * becomes each listener's `allowed_cidrs`, bounded.
 */
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { waitFor } from '../../../test/support/wait.ts';
import { eventReasons, service, slice, startSimHarness, type Harness } from '../../../test/support/service-harness.ts';
import { parseCidr } from '../../core/index.ts';
import { resources } from '../../kube/client/index.ts';
import { provisioningState } from '../../openstack/index.ts';
import type { AdmittedPeers } from '../network/index.ts';
import { MAX_POLICY_CIDRS } from './access.ts';

const ns = 'guarded';

describe("ServiceReconciler: listeners admit what the members' policies admit", { timeout: 120_000 }, () => {
  let h: Harness;
  /** What the test's "policies" admit, by pod key. */
  const admitted = new Map<string, AdmittedPeers>();

  before(async () => {
    h = await startSimHarness({
      auth: 'noauth',
      provisioningDelayMs: 20,
      clusterId: 'access',
      externalCidr: '172.24.9.0/24',
      pods: true,
      peers: (pod) => admitted.get(pod) ?? { everyone: true },
    });
    await h.client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });
  after(async () => {
    await h?.stop();
  });

  const allowedCidrs = async (name: string) => {
    const [lb] = await h.octavia.loadBalancers.list({ name: `raven/access/${ns}/${name}` });
    if (!lb || provisioningState(lb).state !== 'ACTIVE') return undefined;
    const l = (await h.octavia.listeners.list()).find((x) => x.loadbalancers.some((r) => r.id === lb.id));
    return l && (l.allowed_cidrs ?? null);
  };

  it(`more than ${MAX_POLICY_CIDRS} CIDRs: the listener admits no client, and the Service says so`, async () => {
    const body = { metadata: { name: 'web', namespace: ns }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
    await h.client.create(resources.pods, body, { namespace: ns });
    const status = { status: { podIP: '10.244.0.50', podIPs: [{ ip: '10.244.0.50' }] } };
    await h.client.patch(resources.pods, 'web', ns, status, 'merge', { subresource: 'status' });
    // Every other address of 10.1.0.0/16: nothing merges.
    const scattered = Array.from(
      { length: MAX_POLICY_CIDRS + 1 },
      (_, n) => parseCidr(`10.1.${Math.floor(n / 128)}.${(n % 128) * 2}/32`)!.cidr,
    );
    admitted.set(`${ns}/web`, { everyone: false, cidrs: scattered });
    await h.client.create(resources.services, service(ns, 'web', { type: 'LoadBalancer' }), { namespace: ns });
    await h.client.create(resources.endpointslices, slice(ns, 'web', 'a', ['10.244.0.50']), { namespace: ns });
    await waitFor('the listener closed', async () => JSON.stringify(await allowedCidrs('web')) === '["0.0.0.0/32"]', {
      timeoutMs: 20_000,
    });
    await waitFor(
      'AllowedCidrsCapped',
      async () => (await eventReasons(h.client, ns, 'web')).includes('AllowedCidrsCapped'),
      {
        timeoutMs: 20_000,
      },
    );
    // One fewer fits: the listener takes them all (the Service's next look, queued by the test's change).
    admitted.set(`${ns}/web`, { everyone: false, cidrs: scattered.slice(1) });
    await h.client.patch(resources.services, 'web', ns, { metadata: { labels: { look: 'again' } } }, 'merge');
    await waitFor('all of them', async () => (await allowedCidrs('web'))?.length === MAX_POLICY_CIDRS, {
      timeoutMs: 20_000,
    });
  });
});
