import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { fixtures, startPolicyEnv, type PolicyEnv } from '../../../test/support/policy-env.ts';
import type { NetworkPolicy } from '../../kube/api/index.ts';

/**
 * The NetworkPolicy reconciler on the embedded API server and the OpenStack simulator: what it says on each policy
 * (Events read back from the API server) as the groups and the pods' ports come to hold the translation.
 */
describe('NetworkPolicyReconciler', { timeout: 120_000 }, () => {
  let env: PolicyEnv;
  before(async () => {
    env = await startPolicyEnv('np-test');
    await env.apply('node', fixtures.node('node-1', '192.168.0.1'));
  });
  after(async () => {
    await env?.stop();
  });

  const dbFromWeb = (ns: string, ports: NonNullable<NonNullable<NetworkPolicy['spec']>['ingress']>[number]['ports']) =>
    fixtures.policy(ns, 'db-from-web', {
      podSelector: { matchLabels: { app: 'db' } },
      ingress: [{ from: [{ podSelector: { matchLabels: { app: 'web' } } }], ports }],
    });
  const withPods = async (ns: string) => {
    await env.apply('namespace', fixtures.namespace(ns));
    await env.apply('pod', fixtures.pod(ns, 'web', { app: 'web' }));
    await env.apply('pod', fixtures.pod(ns, 'db', { app: 'db' }));
  };
  /** Gives the pod a port carrying exactly the groups the translation gives it. */
  const wire = async (key: string) => {
    const pod = env.pods.get(key)!;
    const want = env.portGroups.of(pod);
    assert.ok('ids' in want, `the groups of ${key} exist`);
    await env.portFor(pod, want.ids);
  };
  const said = async (ns: string, name: string) =>
    (await env.eventsOf(ns, name)).map((e) => ({ type: e.type, reason: e.reason, message: e.message, count: e.count }));

  it('says a policy Raven cannot read is not translated, and why', async () => {
    await env.apply('namespace', fixtures.namespace('bad'));
    await env.apply('policy', dbFromWeb('bad', [{ port: 90, endPort: 80 }]));
    env.policies.reconcile('bad/db-from-web');
    const events = await said('bad', 'db-from-web');
    assert.equal(events.length, 1, JSON.stringify(events));
    assert.equal(events[0]!.type, 'Warning');
    assert.equal(events[0]!.reason, 'TranslationFailed');
    assert.match(
      events[0]!.message ?? '',
      /spec\.ingress\[0\]\.ports\[0\]\.endPort: must be .*: the pods it selects stay isolated, with none of its rules$/,
    );
  });

  it('says Translated once Neutron holds all of it — its groups with their rules, every pod port with its groups — once per generation', async () => {
    await withPods('ok');
    await env.apply('policy', dbFromWeb('ok', [{ port: 5432 }]));
    const key = 'ok/db-from-web';
    const seen = env.translated.length;
    // No group made yet.
    env.policies.reconcile(key);
    assert.ok(env.policies.pending().includes(key));
    await env.convergeGroups();
    // The groups hold their rules, but a pod's port still lacks its groups.
    await wire('ok/web');
    await env.portFor(env.pods.get('ok/db')!, []);
    env.policies.reconcile(key);
    assert.deepEqual(await said('ok', 'db-from-web'), []);
    assert.equal(env.translated.length, seen);

    await wire('ok/db');
    env.policies.reconcile(key);
    env.policies.reconcile(key); // a repeat says nothing new
    assert.deepEqual(await said('ok', 'db-from-web'), [
      {
        type: 'Normal',
        reason: 'Translated',
        message: 'generation 1: 2 security group(s) with 1 rule(s); 2 pod port(s) carry them',
        count: 1,
      },
    ]);
    assert.equal(env.translated.length, seen + 1, 'onTranslated once for the generation');
    assert.ok(!env.policies.pending().includes(key));

    // A new generation: not reported until its rules are in Neutron.
    await env.apply('policy', dbFromWeb('ok', [{ port: 5432 }, { port: 5433 }]));
    env.policies.reconcile(key);
    assert.ok(env.policies.pending().includes(key));
    await env.convergeGroups();
    env.policies.reconcile(key);
    const events = await said('ok', 'db-from-web');
    // The same Event, counted again with the latest message (the recorder's aggregation).
    assert.equal(events.length, 1);
    assert.match(
      events[0]!.message ?? '',
      /generation 2: 2 security group\(s\) with 2 rule\(s\); 2 pod port\(s\) carry them$/,
    );
    assert.equal(events[0]!.count, 2);
    assert.equal(env.translated.length, seen + 2);
  });

  it('says which group Neutron refuses and why, and Translated once it is made', async () => {
    await withPods('full');
    const probe = await env.neutron.securityGroups.list({});
    const project = probe[0]!.project_id;
    await env.neutron.quotas.update(project, { security_group: probe.length });
    let limited = true;
    try {
      await env.apply('policy', dbFromWeb('full', [{ port: 80 }]));
      await assert.rejects(env.convergeGroups(), /quota is full/);
      env.policies.reconcile('full/db-from-web');
      const [failed] = await said('full', 'db-from-web');
      assert.equal(failed?.type, 'Warning');
      assert.equal(failed.reason, 'TranslationFailed');
      assert.match(
        failed.message ?? '',
        /^security group pods\|ns=full\|pods=app=(db|web): Neutron's security group \(or rule\) quota is full/,
      );
      await env.neutron.quotas.reset(project);
      limited = false;
      await env.convergeGroups();
      await wire('full/web');
      await wire('full/db');
      env.policies.reconcile('full/db-from-web');
      assert.equal((await said('full', 'db-from-web')).at(-1)?.reason, 'Translated');
    } finally {
      if (limited) await env.neutron.quotas.reset(project);
    }
  });

  it('reports a policy once the pods it concerns are done: a pod stuck in another namespace holds nothing back', async () => {
    // Another tenant's pod whose port lacks its groups (its update keeps failing, say).
    await withPods('stuck');
    await env.portFor(env.pods.get('stuck/web')!, []);
    await withPods('mine');
    await env.apply('policy', dbFromWeb('mine', [{ port: 80 }]));
    await env.convergeGroups();
    await wire('mine/web');
    await wire('mine/db');
    env.policies.reconcile('mine/db-from-web');
    assert.equal((await said('mine', 'db-from-web')).at(-1)?.reason, 'Translated');
    // One of its own pods' ports not done: not reported.
    await env.apply('policy', dbFromWeb('stuck', [{ port: 80 }]));
    await env.convergeGroups();
    await wire('stuck/db');
    env.policies.reconcile('stuck/db-from-web');
    assert.deepEqual(await said('stuck', 'db-from-web'), []);
    await wire('stuck/web');
  });

  it('does not report a policy that only isolates until the pods it selects have left their open groups', async () => {
    await withPods('iso');
    await env.apply('policy', fixtures.policy('iso', 'deny', { podSelector: {}, policyTypes: ['Ingress'] }));
    await env.convergeGroups();
    // Neither port has its new groups yet (as before the policy, or lacking them): the policy is not in Neutron.
    await env.portFor(env.pods.get('iso/web')!, []);
    await env.portFor(env.pods.get('iso/db')!, []);
    env.policies.reconcile('iso/deny');
    assert.deepEqual(await said('iso', 'deny'), []);
    await wire('iso/web');
    await wire('iso/db');
    env.policies.reconcile('iso/deny');
    assert.equal((await said('iso', 'deny')).at(-1)?.reason, 'Translated');
  });

  it('forgets a deleted policy', async () => {
    await env.apply('namespace', fixtures.namespace('del'));
    await env.apply('policy', dbFromWeb('del', [{ port: 80 }]));
    env.policies.reconcile('del/db-from-web');
    assert.ok(env.policies.pending().includes('del/db-from-web'));
    await env.remove('policy', 'del', 'db-from-web');
    env.policies.reconcile('del/db-from-web');
    assert.ok(!env.policies.pending().includes('del/db-from-web'));
  });
});
