/**
 * Issue 5 "Faults": Neutron answers 10 % of port creates and port lists with a 5xx, and adds latency to the rest,
 * through the OpenStack simulator's fault API (`/_sim/faults/rules`). The transport retries the lists (idempotent),
 * never a create: a failed POST is the reconcile loop's to retry. In the simulator a faulted request is rejected
 * before it is processed, so a 5xx POST created nothing; on a real cloud a 5xx (a proxy's, a timeout) may still have
 * created the port, which Raven covers by finding ports by `device_id` before creating. Strategy `namespace`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { fetch } from 'undici';
import { resources } from '../../../src/kube/client/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  assertConverged,
  createNamespaces,
  createPods,
  deleteAllAndAssertClean,
  namespaceSubnets,
  ravenSettings,
  startEnv,
  startRavenInProcess,
  type Env,
} from './support.ts';

const SEED = Number(process.env.RAVEN_FAULT_SEED ?? 5_000_503);
const CLUSTER = 'flaky';
const NAMESPACES = ['flaky-a', 'flaky-b', 'flaky-c'];

interface Rule {
  id: number;
  method?: string;
  path: string;
  hits: number;
}

describe(`Raven with 10 % Neutron 5xx and added latency (seed ${SEED})`, { timeout: 120_000 }, () => {
  let env: Env;
  let raven: { stop(): Promise<void> } | undefined;

  before(async () => {
    env = await startEnv(SEED);
  });
  after(async () => {
    await raven?.stop();
    await env.stop();
  });

  async function simApi<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(`${env.sim.url}/_sim/${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
    });
    const text = await res.text();
    assert.ok(res.status < 300, `${method} /_sim/${path}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  }

  it('converges with one port per pod, no duplicates, and leaves nothing behind', async () => {
    await createNamespaces(env.client, NAMESPACES);
    raven = startRavenInProcess(env, ravenSettings(CLUSTER, 'namespace'));
    await waitFor(
      'namespace subnets',
      async () => (await namespaceSubnets(env.client, NAMESPACES)).length === NAMESPACES.length,
      { timeoutMs: 30_000 },
    );
    await simApi('DELETE', 'counters');
    // The first matching rule decides: 10 % of port POSTs and GETs fail (slowly), the rest of Neutron is slowed.
    await simApi('POST', 'faults/rules', {
      method: 'POST',
      path: '/network/v2.0/ports',
      rate: 0.1,
      status: 500,
      latency: { p50Ms: 20, p99Ms: 200 },
    });
    await simApi('POST', 'faults/rules', {
      method: 'GET',
      path: '/network/v2.0/ports',
      rate: 0.1,
      status: 503,
      latency: { p50Ms: 10, p99Ms: 100 },
    });
    await simApi('POST', 'faults/rules', { path: '/network/v2.0', latency: { p50Ms: 5, p99Ms: 50 } });

    await createPods(env.client, NAMESPACES, 150, 'web');
    const counts = await assertConverged(env, CLUSTER, NAMESPACES);
    assert.deepEqual(counts, { pods: 150, ports: 150 });
    const { rules } = await simApi<{ rules: Rule[] }>('GET', 'faults/rules');
    const hits = Object.fromEntries(rules.map((r) => [`${r.method ?? '*'} ${r.path}`, r.hits]));
    const counters = await simApi<Record<string, number>>('GET', 'counters');
    const posts = counters['POST /network/v2.0/ports'] ?? 0;
    assert.ok((hits['POST /network/v2.0/ports'] ?? 0) > 0, `no port create failed: ${JSON.stringify(hits)}`);
    // Each failed POST created nothing, so creates = ports + failures (+ retries of reconciles that failed after).
    assert.ok(
      posts >= 150 + hits['POST /network/v2.0/ports']!,
      `POSTs ${posts}, failed ${hits['POST /network/v2.0/ports']}`,
    );
    process.stdout.write(
      `# fault hits ${JSON.stringify(hits)}; port POSTs ${posts}; converged at ${JSON.stringify(counts)}\n`,
    );

    // Deletion under the same faults.
    await deleteAllAndAssertClean(env, CLUSTER, NAMESPACES);
    await simApi('DELETE', 'faults/rules');
  });

  // The namespace reconciler creates a network, then tags it in a second request; when the tagging fails (or the
  // process dies in between) the next reconcile must find the untagged network by name and adopt it, not make another.
  it('a namespace network whose tagging failed is not duplicated', async () => {
    await simApi('POST', 'faults/rules', {
      method: 'PUT',
      path: '/network/v2.0/networks/{id}/tags',
      count: 4,
      status: 503,
    });
    await createNamespaces(env.client, ['flaky-dup']);
    await waitFor(
      'the namespace network',
      async () => (await namespaceSubnets(env.client, ['flaky-dup'])).length === 1,
      { timeoutMs: 30_000 },
    );
    const nets = await env.neutron.networks.list({ name: `raven/${CLUSTER}/flaky-dup` });
    await env.client.delete(resources.namespaces, 'flaky-dup');
    assert.equal(nets.length, 1, `networks: ${nets.map((n) => `${n.id} tags=[${n.tags.join(',')}]`).join('; ')}`);
  });
});
