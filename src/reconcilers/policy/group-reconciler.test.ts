import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { RetryableError } from '../../controller/index.ts';
import { fixtures, startPolicyEnv, type PolicyEnv } from '../../../test/support/policy-env.ts';
import { groupId, neutronRuleText, type RecordedGroup } from './translation/index.ts';

const CLUSTER = 'sg-test';
const signal = () => AbortSignal.timeout(10_000);

/** The security group reconciler on the embedded API server and the OpenStack simulator; state asserted in Neutron. */
describe('SecurityGroupReconciler', { timeout: 120_000 }, () => {
  let env: PolicyEnv;
  before(async () => {
    env = await startPolicyEnv(CLUSTER);
    await env.apply('node', fixtures.node('node-1', '192.168.0.1'));
  });
  after(async () => {
    await env?.stop();
  });

  /** The id of the group of a pod set, by its key (`pods|ns=x|pods=app=db`). */
  const idOf = (key: string): string => {
    const id = groupId(key);
    assert.ok(env.model.groups().has(id), `the translation wants ${key}`);
    return id;
  };
  /** The group's rules as Neutron holds them (their texts, remote groups by Neutron id), sorted. */
  const neutronRules = async (neutronId: string): Promise<string[]> =>
    (await env.neutron.securityGroups.get(neutronId)).security_group_rules.map(neutronRuleText).sort();
  const recorded = (id: string): RecordedGroup => {
    const group = env.record.get(id);
    assert.ok(group, `the record holds ${id}`);
    return group;
  };

  /** Namespace `ns` with pods web and db, and a policy letting web reach db on `port`. */
  const dbFromWeb = async (ns: string, port: number) => {
    await env.apply('namespace', fixtures.namespace(ns));
    await env.apply('pod', fixtures.pod(ns, 'web', { app: 'web' }));
    await env.apply('pod', fixtures.pod(ns, 'db', { app: 'db' }));
    await env.apply(
      'policy',
      fixtures.policy(ns, 'db-from-web', {
        podSelector: { matchLabels: { app: 'db' } },
        ingress: [{ from: [{ podSelector: { matchLabels: { app: 'web' } } }], ports: [{ port }] }],
      }),
    );
    return { db: idOf(`pods|ns=${ns}|pods=app=db`), web: idOf(`pods|ns=${ns}|pods=app=web`) };
  };

  it('makes a wanted group named, described and tagged, with exactly its rules; a rule naming a group not made yet waits for it', async () => {
    const { db, web } = await dbFromWeb('made', 5432);
    // The rule's remote group does not exist yet: the group is made without it, and asks to be looked at again.
    const first = await env.groups.reconcile(db, signal());
    assert.equal(first?.waiting, 'RemoteSecurityGroup');
    const group = await env.neutron.securityGroups.get(recorded(db).neutronId);
    assert.equal(group.name, `raven/${CLUSTER}/sg/${db}`);
    assert.equal(group.description, `raven security group ${db} of cluster ${CLUSTER}: pods app=db of namespace made`);
    assert.deepEqual([...group.tags].sort(), [
      `raven.cluster=${CLUSTER}`,
      'raven.kind=securitygroup',
      `raven.uid=${db}`,
    ]);
    // Neutron's two default egress rules are gone: the group allows nothing yet.
    assert.deepEqual(await neutronRules(group.id), []);

    assert.equal(await env.groups.reconcile(web, signal()), undefined);
    assert.equal(await env.groups.reconcile(db, signal()), undefined);
    const webNeutronId = recorded(web).neutronId;
    assert.deepEqual(await neutronRules(group.id), [`ingress IPv4 tcp:5432-5432 group=${webNeutronId}`]);
    assert.deepEqual(await neutronRules(webNeutronId), []);
    // Raven's record says what Neutron holds.
    assert.deepEqual([...recorded(db).rules.keys()].sort(), await neutronRules(group.id));
  });

  it('changes a policy as a diff: the same group, the old rule deleted and the new one made', async () => {
    const { db, web } = await dbFromWeb('diff', 5432);
    await env.convergeGroups();
    const before = recorded(db);
    const webNeutronId = recorded(web).neutronId;
    const policy = fixtures.policy('diff', 'db-from-web', {
      podSelector: { matchLabels: { app: 'db' } },
      ingress: [
        {
          from: [{ podSelector: { matchLabels: { app: 'web' } } }],
          ports: [{ port: 5433 }, { port: 6000, endPort: 6010 }],
        },
      ],
    });
    await env.apply('policy', policy);
    assert.equal(await env.groups.reconcile(db, signal()), undefined);
    assert.equal(recorded(db).neutronId, before.neutronId, 'the group is kept');
    assert.deepEqual(await neutronRules(before.neutronId), [
      `ingress IPv4 tcp:5433-5433 group=${webNeutronId}`,
      `ingress IPv4 tcp:6000-6010 group=${webNeutronId}`,
    ]);
    // Converged: a second reconcile changes nothing.
    const ids = [...recorded(db).rules.values()].sort();
    assert.equal(await env.groups.reconcile(db, signal()), undefined);
    assert.deepEqual([...recorded(db).rules.values()].sort(), ids);
  });

  it('deletes a group nothing wants once no port carries it (SecurityGroupInUse until then)', async () => {
    const { web } = await dbFromWeb('gone', 80);
    await env.convergeGroups();
    const neutronId = recorded(web).neutronId;
    const port = await env.portFor(env.pods.get('gone/web')!, [neutronId]);
    const seen = env.changes.length;
    await env.remove('policy', 'gone', 'db-from-web');
    assert.ok(!env.model.groups().has(web), 'nothing wants the group any more');
    const waiting = await env.groups.reconcile(web, signal());
    assert.equal(waiting?.waiting, 'SecurityGroupInUse');
    assert.equal((await env.neutron.securityGroups.get(neutronId)).id, neutronId, 'still in Neutron');
    assert.equal(env.status.error(web), undefined, 'waiting for ports is not a failure');
    // Neutron no longer has the port in the group, but the update's answer is not in Raven's record yet (the port
    // still carries it there): ML2/OVN may still be writing the port's OVN side, which a deleted group would fail.
    await env.neutron.ports.delete(port.id);
    assert.equal((await env.groups.reconcile(web, signal()))?.waiting, 'SecurityGroupInUse');
    assert.equal((await env.neutron.securityGroups.get(neutronId)).id, neutronId, 'not deleted while recorded in use');
    await env.portFor(env.pods.get('gone/web')!, []);
    assert.equal(await env.groups.reconcile(web, signal()), undefined);
    assert.deepEqual(await env.neutron.securityGroups.list({ id: neutronId }), []);
    assert.equal(env.record.get(web), undefined);
    assert.deepEqual(
      env.changes.slice(seen).flatMap((e) => (e.id === web ? [e.change] : [])),
      ['in-use', 'in-use', 'deleted'],
    );
  });

  it("turns Neutron's OverQuota into QuotaExceeded, said on the group's status until it is made", async () => {
    const probe = await env.neutron.securityGroups.list({});
    const project = probe[0]!.project_id;
    await env.neutron.quotas.update(project, { security_group: probe.length });
    let limited = true;
    try {
      await env.apply('namespace', fixtures.namespace('quota'));
      await env.apply(
        'policy',
        fixtures.policy('quota', 'web', {
          podSelector: { matchLabels: { app: 'q' } },
          ingress: [{ ports: [{ port: 80 }] }],
        }),
      );
      const id = idOf('pods|ns=quota|pods=app=q');
      await assert.rejects(
        env.groups.reconcile(id, signal()),
        (err: unknown) => err instanceof RetryableError && err.reason === 'QuotaExceeded',
      );
      assert.match(env.status.error(id) ?? '', /quota is full: security group for pods app=q of namespace quota/);
      assert.equal(env.record.get(id), undefined);
      await env.neutron.quotas.reset(project);
      limited = false;
      assert.equal(await env.groups.reconcile(id, signal()), undefined);
      assert.equal(env.status.error(id), undefined);
      assert.ok(env.record.get(id));
    } finally {
      if (limited) await env.neutron.quotas.reset(project);
    }
  });

  it('changes nothing until what the rules name outside the caches is known (ready)', async () => {
    await env.apply('namespace', fixtures.namespace('ready'));
    await env.apply(
      'policy',
      fixtures.policy('ready', 'web', {
        podSelector: { matchLabels: { app: 'r' } },
        ingress: [{ ports: [{ port: 80 }] }],
      }),
    );
    const id = idOf('pods|ns=ready|pods=app=r');
    env.ready.value = false;
    try {
      assert.equal(await env.groups.reconcile(id, signal()), undefined);
      assert.equal(env.record.get(id), undefined);
      assert.deepEqual(await env.neutron.securityGroups.list({ name: `raven/${CLUSTER}/sg/${id}` }), []);
    } finally {
      env.ready.value = true;
    }
    await env.groups.reconcile(id, signal());
    assert.equal((await env.neutron.securityGroups.list({ name: `raven/${CLUSTER}/sg/${id}` })).length, 1);
  });

  it('reads a group again when a rule it makes already exists (an answer was lost), and never makes it twice', async () => {
    const { db } = await dbFromWeb('lost', 3306);
    await env.convergeGroups();
    const group = recorded(db);
    const held = await neutronRules(group.neutronId);
    assert.equal(held.length, 1);
    // The record as a reconcile whose create answer was lost would have left it: without the rule.
    env.record.put({ ...group, rules: new Map() });
    await assert.rejects(env.groups.reconcile(db, signal()), /SecurityGroupRuleExists/);
    assert.deepEqual([...recorded(db).rules.keys()], held, 'the record was read again from Neutron');
    assert.equal(await env.groups.reconcile(db, signal()), undefined);
    assert.deepEqual(await neutronRules(group.neutronId), held);
  });
});
