import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { fixtures, startPolicyEnv, type PolicyEnv } from '../../../test/support/policy-env.ts';
import { realClock, silentLogger, type Clock } from '../../core/index.ts';
import { groupId } from './translation/index.ts';
import { SecurityGroupReconciler } from './group-reconciler.ts';
import { PolicyTransitions, Widenings, type TransitionPort } from './transitions.ts';

const SETTLE_MS = 2_000;
const MAX_HOLD_MS = 60_000;

/**
 * Make before break, decided over real state: the translation on the embedded API server, Raven's record of its groups
 * and real ports in the OpenStack simulator. The clock is the test's, so "settled" is a step, not a wait.
 */
describe('PolicyTransitions', { timeout: 120_000 }, () => {
  let env: PolicyEnv;
  let now = 1_000_000;
  const clock: Clock = { ...realClock, now: () => now };
  const ports: TransitionPort[] = [];
  let portWidenings: Widenings;
  let transitions: PolicyTransitions;

  before(async () => {
    env = await startPolicyEnv('transitions');
    await env.apply('node', fixtures.node('node-1', '192.168.0.1'));
    portWidenings = new Widenings(clock, 2 * SETTLE_MS);
    transitions = new PolicyTransitions({
      model: env.model,
      record: env.record,
      portGroups: env.portGroups,
      ports: { all: () => ports },
      podOf: (uid) => env.pods.list().find((p) => p.metadata.uid === uid),
      portWidenings,
      groupWidenings: new Widenings(clock, 2 * SETTLE_MS),
      clock,
      settleMs: SETTLE_MS,
      maxHoldMs: MAX_HOLD_MS,
      logger: silentLogger,
    });
  });
  after(async () => {
    await env?.stop();
  });

  const wanted = (namespace: string, name: string): string[] => {
    const groups = env.portGroups.of(env.pods.get(`${namespace}/${name}`)!);
    assert.ok('ids' in groups, `the groups of ${namespace}/${name} exist`);
    return groups.ids;
  };
  /** A real port for the pod carrying its groups now, and Raven's record of it. */
  const wire = async (namespace: string, name: string): Promise<TransitionPort> => {
    const port = await env.portFor(env.pods.get(`${namespace}/${name}`)!, wanted(namespace, name));
    const recorded = { id: port.id, deviceId: port.device_id, securityGroups: [...port.security_groups].sort() };
    ports.push(recorded);
    return recorded;
  };
  /** The pod reconciler's widening: its new groups beside its old ones, in Neutron and the record. */
  const widen = async (port: TransitionPort, namespace: string, name: string): Promise<void> => {
    const ids = [...new Set([...port.securityGroups, ...wanted(namespace, name)])].sort();
    await env.neutron.ports.update(port.id, { security_groups: ids });
    port.securityGroups = ids;
    portWidenings.widened(port.id);
  };
  /** The test's ports go (a later test's groups would wait for them: Neutron refuses to delete a group in use). */
  const unwire = async () => {
    for (const port of ports.splice(0)) await env.deletePort(port.id, port.deviceId);
  };
  const dropOf = (port: TransitionPort, namespace: string, name: string) =>
    port.securityGroups.filter((id) => !wanted(namespace, name).includes(id));

  it('a pod leaves a peer group only after the pods whose rules name it took their new groups, and they settled', async () => {
    await env.apply('namespace', fixtures.namespace('del'));
    await env.apply('pod', fixtures.pod('del', 'web', { app: 'web' }));
    await env.apply('pod', fixtures.pod('del', 'db', { app: 'db' }));
    await env.apply(
      'policy',
      fixtures.policy('del', 'db-from-web', {
        podSelector: { matchLabels: { app: 'db' } },
        ingress: [{ from: [{ podSelector: { matchLabels: { app: 'web' } } }] }],
      }),
    );
    await env.convergeGroups();
    const web = await wire('del', 'web');
    const db = await wire('del', 'db');
    const webGroup = env.record.get(groupId('pods|ns=del|pods=app=web'))!.neutronId;
    assert.ok(web.securityGroups.includes(webGroup), 'web is in the group db admits');

    await env.remove('policy', 'del', 'db-from-web');
    assert.deepEqual(dropOf(web, 'del', 'web'), [webGroup]);
    // db still carries its isolating group, whose rule names web's group, and not yet its open group.
    const held = transitions.portMayDrop(web.id, dropOf(web, 'del', 'web'), wanted('del', 'web'));
    assert.match(held?.why ?? '', /the port of pod del\/db has not taken its new groups/);

    await widen(db, 'del', 'db');
    const settling = transitions.portMayDrop(web.id, dropOf(web, 'del', 'web'), wanted('del', 'web'));
    assert.ok(settling && settling.waitMs > 0 && settling.waitMs <= SETTLE_MS, JSON.stringify(settling));
    now += SETTLE_MS;
    assert.equal(transitions.portMayDrop(web.id, dropOf(web, 'del', 'web'), wanted('del', 'web')), undefined);
    // db itself drops its isolating groups at once: nothing names them, and it is open by its new groups.
    assert.equal(transitions.portMayDrop(db.id, dropOf(db, 'del', 'db'), wanted('del', 'db')), undefined);
    await unwire();
  });

  it("a group's stale rule goes only once the members of its new rule's remote group carry it, and settled", async () => {
    await env.apply('namespace', fixtures.namespace('edit'));
    await env.apply('pod', fixtures.pod('edit', 'web', { app: 'web' }));
    await env.apply('pod', fixtures.pod('edit', 'db', { app: 'db' }));
    const policy = (from: Record<string, string>) =>
      fixtures.policy('edit', 'db', {
        podSelector: { matchLabels: { app: 'db' } },
        ingress: [{ from: [{ podSelector: { matchLabels: from } }], ports: [{ port: 5432 }] }],
      });
    await env.apply('policy', policy({ app: 'web' }));
    await env.convergeGroups();
    const web = await wire('edit', 'web');
    await wire('edit', 'db');
    const db = groupId('pods|ns=edit|pods=app=db');

    // The peer becomes "role=client", which web gets too: a new group that web must join before the old rule goes.
    await env.apply('pod', fixtures.pod('edit', 'web', { app: 'web', role: 'client' }));
    await env.apply('policy', policy({ role: 'client' }));
    await env.groups.reconcile(groupId('pods|ns=edit|pods=role=client'), AbortSignal.timeout(10_000));
    assert.match(transitions.groupMayNarrow(db)?.why ?? '', /lacks rules it is to have/);
    // Stand in for the group reconciler's widening: the new rule made, the old one still there.
    const widenings = new Widenings(clock, 2 * SETTLE_MS);
    const reconciler = new SecurityGroupReconciler({
      cloud: { neutron: env.neutron, octavia: undefined as never },
      config: { clusterId: env.clusterId },
      model: env.model,
      record: env.record,
      status: env.status,
      transitions,
      widenings,
      logger: silentLogger,
    });
    const first = await reconciler.reconcile(db, AbortSignal.timeout(10_000));
    assert.equal(first?.waiting, 'PolicyTransition', 'the stale rule waits');
    assert.equal(env.record.get(db)!.rules.size, 2, 'the old rule and the new one, side by side');
    assert.match(transitions.groupMayNarrow(db)?.why ?? '', /the port of pod edit\/web has not taken its new groups/);

    await widen(web, 'edit', 'web');
    now += SETTLE_MS;
    assert.equal(await reconciler.reconcile(db, AbortSignal.timeout(10_000)), undefined);
    assert.equal(env.record.get(db)!.rules.size, 1, 'the stale rule is gone');
    await unwire();
  });

  it("a pod leaves a peer group only once it carries another namespace's new one and the rules naming the old have theirs", async () => {
    // y's web admits x's pod a; the edit admits all of namespace x instead: a group only y's policy needs, which x/a
    // does not wait for (it is left out of x/a's groups while it is not made).
    await env.apply('namespace', fixtures.namespace('tx', { ns: 'tx' }));
    await env.apply('namespace', fixtures.namespace('ty'));
    await env.apply('pod', fixtures.pod('tx', 'a', { app: 'a' }));
    await env.apply('pod', fixtures.pod('ty', 'web', { app: 'web' }));
    const policy = (from: object) =>
      fixtures.policy('ty', 'allow', {
        podSelector: { matchLabels: { app: 'web' } },
        ingress: [{ from: [from], ports: [{ port: 80 }] }],
      });
    await env.apply(
      'policy',
      policy({ namespaceSelector: { matchLabels: { ns: 'tx' } }, podSelector: { matchLabels: { app: 'a' } } }),
    );
    await env.convergeGroups();
    const a = await wire('tx', 'a');
    await wire('ty', 'web');
    const target = groupId('pods|ns=ty|pods=app=web');

    await env.apply('policy', policy({ namespaceSelector: { matchLabels: { ns: 'tx' } } }));
    const made = new Set(env.record.all().map((g) => g.id));
    const [fresh] = [...env.model.groups().keys()].filter((id) => !made.has(id));
    assert.ok(fresh, 'the new peer group is not made yet');
    const drop = dropOf(a, 'tx', 'a');
    assert.equal(drop.length, 1, 'x/a is to leave the old peer group');
    assert.match(transitions.portMayDrop(a.id, drop, wanted('tx', 'a'))?.why ?? '', /pod tx\/a has not taken its new/);

    // Made and carried, but the target group still admits only the old peer group.
    await env.groups.reconcile(fresh, AbortSignal.timeout(10_000));
    await widen(a, 'tx', 'a');
    now += SETTLE_MS;
    assert.match(transitions.portMayDrop(a.id, drop, wanted('tx', 'a'))?.why ?? '', /lacks rules it is to have/);

    // The target's new rule made (its old one waits): once settled, x/a may leave.
    await env.groups.reconcile(target, AbortSignal.timeout(10_000));
    now += SETTLE_MS;
    assert.equal(transitions.portMayDrop(a.id, drop, wanted('tx', 'a')), undefined);
    await unwire();
  });

  it('a narrowing blocked by another pod that cannot take its groups goes ahead after the longest hold', async () => {
    await env.apply('namespace', fixtures.namespace('hold'));
    await env.apply('pod', fixtures.pod('hold', 'web', { app: 'web' }));
    await env.apply('pod', fixtures.pod('hold', 'db', { app: 'db' }));
    await env.apply(
      'policy',
      fixtures.policy('hold', 'db-from-web', {
        podSelector: { matchLabels: { app: 'db' } },
        ingress: [{ from: [{ podSelector: { matchLabels: { app: 'web' } } }] }],
      }),
    );
    await env.convergeGroups();
    const web = await wire('hold', 'web');
    await wire('hold', 'db');
    await env.remove('policy', 'hold', 'db-from-web');
    // db never takes its new groups.
    assert.ok(transitions.portMayDrop(web.id, dropOf(web, 'hold', 'web'), wanted('hold', 'web')));
    now += MAX_HOLD_MS - 1;
    assert.ok(transitions.portMayDrop(web.id, dropOf(web, 'hold', 'web'), wanted('hold', 'web')));
    now += 1;
    assert.equal(transitions.portMayDrop(web.id, dropOf(web, 'hold', 'web'), wanted('hold', 'web')), undefined);
    await unwire();
  });
});
