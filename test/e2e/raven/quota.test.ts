/**
 * Issue 5 "Faults": the project's Neutron port quota (`PUT /v2.0/quotas/{project}`) runs out in the middle of a
 * burst. Pods past the quota wait with a `QuotaExceeded` Warning Event on them; deleting pods elsewhere still works
 * and the freed quota goes to waiting pods; once the quota is raised everything converges. Strategy `shared`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import type { KubeObject } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  assertConverged,
  createNamespaces,
  createPods,
  deleteAllAndAssertClean,
  deletePods,
  podPorts,
  ravenSettings,
  startEnv,
  startRavenInProcess,
  type Env,
} from './support.ts';

const CLUSTER = 'quota';
const BURST = 'quota-burst';
const OTHER = 'quota-other';

interface EventObject extends KubeObject {
  type?: string;
  reason?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string; uid?: string };
}

describe('Raven with the port quota exhausted, then raised', { timeout: 120_000 }, () => {
  let env: Env;
  let raven: { stop(): Promise<void> } | undefined;
  let project = '';

  before(async () => {
    env = await startEnv(7_000_409);
  });
  after(async () => {
    await raven?.stop();
    if (project) await env.neutron.quotas.reset(project).catch(() => undefined);
    await env.stop();
  });

  const portsIn = async (ns: string): Promise<number> =>
    (await podPorts(env.neutron, CLUSTER)).filter((p) => p.name.startsWith(`raven/${CLUSTER}/${ns}/`)).length;

  it('waiting pods get a QuotaExceeded Warning, deletes go on, and all converge once the quota is raised', async () => {
    await createNamespaces(env.client, [BURST, OTHER]);
    raven = startRavenInProcess(env, ravenSettings(CLUSTER, 'shared'));
    await createPods(env.client, [OTHER], 20, 'other');
    await assertConverged(env, CLUSTER, [OTHER]);

    // Room for 10 more ports in the project (router interfaces and the like count too), then a burst of 40 pods.
    const [port] = await podPorts(env.neutron, CLUSTER);
    project = port!.project_id!;
    const used = (await env.neutron.quotas.details(project)).port!.used;
    await env.neutron.quotas.update(project, { port: used + 10 });
    await createPods(env.client, [BURST], 40, 'burst');

    const warned = await waitFor(
      'QuotaExceeded Warnings on the 30 pods past the quota',
      async () => {
        const events = (await env.client.listAll<EventObject>(resources.events, { namespace: BURST })).items;
        const names = new Set(
          events
            .filter((e) => e.type === 'Warning' && e.reason === 'QuotaExceeded' && e.involvedObject?.kind === 'Pod')
            .map((e) => e.involvedObject!.name),
        );
        return names.size >= 30 ? { names, sample: events.find((e) => e.reason === 'QuotaExceeded')! } : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    assert.match(warned.sample.message ?? '', /quota/i);
    assert.equal(await portsIn(BURST), 10, "exactly the quota's worth of ports was made");
    const pods = (await env.client.listAll(resources.pods, { namespace: BURST })).items;
    const withVif = pods.filter((p) => p.metadata.annotations?.['raven.openstack.org/vif']);
    assert.equal(withVif.length, 10);
    assert.deepEqual(
      withVif.filter((p) => warned.names.has(p.metadata.name)).map((p) => p.metadata.name),
      [],
      'a wired pod was warned',
    );
    assert.equal(warned.names.size, 30, 'only the pods past the quota are warned');

    // Another namespace keeps working: its deletes go through, and the freed quota goes to waiting pods.
    await deletePods(
      env.client,
      Array.from({ length: 5 }, (_, i) => ({ namespace: OTHER, name: `other-${i}` })),
    );
    await waitFor(
      "the deleted pods' ports gone and 5 more burst pods wired",
      async () => (await portsIn(OTHER)) === 15 && (await portsIn(BURST)) === 15,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    assert.equal((await env.neutron.quotas.details(project)).port!.used, used + 10, 'the quota is still full');

    await env.neutron.quotas.update(project, { port: -1 });
    const raised = Date.now();
    const counts = await assertConverged(env, CLUSTER, [BURST, OTHER]);
    assert.deepEqual(counts, { pods: 55, ports: 55 });
    process.stdout.write(
      `# quota ${used + 10} (used before ${used}); ${warned.names.size} pods warned; converged at ${JSON.stringify(counts)} ${Date.now() - raised} ms after the raise\n`,
    );
    await deleteAllAndAssertClean(env, CLUSTER, [BURST, OTHER]);
  });
});
