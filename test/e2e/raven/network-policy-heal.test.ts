/**
 * Issue 26, rows 7 and 7a: Raven's security groups and their rules changed in Neutron behind Raven's back. Raven
 * (`composeRaven`, as `raven run` builds it) on the embedded API server and the OpenStack simulator, with the garbage
 * collector's interval long enough that only the rounds the test runs (`gc.round()`) sweep: the sweep after the damage
 * must find it and the security group reconciler must repair it, leaving exactly one copy of each group and rule.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import type { ComposedRaven } from '../../../src/daemon/compose.ts';
import type { SecurityGroup } from '../../../src/openstack/index.ts';
import { groupId, groupKey, neutronRuleText } from '../../../src/reconcilers/index.ts';
import { waitFor } from '../../support/wait.ts';
import { composeInProcess, createPolicy, podBody, ravenSettings, startEnv, waitForPort, type Env } from './support.ts';

const CLUSTER = 'heal';
/** Long enough that no round of the loop's own runs during a test: each sweep is the test's `gc.round()`. */
const GC_INTERVAL_SECONDS = 3_600;
const HEAL_TIMEOUT_MS = 15_000;

describe(
  'Raven heals its security groups deleted or changed in Neutron (issue 26, rows 7, 7a)',
  { timeout: 120_000 },
  () => {
    let env: Env;
    let raven: ComposedRaven;
    let stopRaven: (() => Promise<void>) | undefined;

    before(async () => {
      env = await startEnv(26_007);
      const config = loadRavenConfig({
        env: { ...ravenSettings(CLUSTER, 'shared'), RAVEN_PORT_POOLS: 'false' },
        flags: { gc: { intervalSeconds: GC_INTERVAL_SECONDS, graceSeconds: 0 } },
      });
      ({ composed: raven, stop: stopRaven } = await composeInProcess(env, config));
      await env.client.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
      await env.client.create(resources.namespaces, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name: 'shop' },
      });
    });
    after(async () => {
      await stopRaven?.();
      await env?.stop();
    });

    /** Every group of the cluster in Neutron with this translation id (its `raven.uid`). */
    const groupsWithId = (id: string): Promise<SecurityGroup[]> =>
      env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`, `raven.uid=${id}`] });
    const onlyGroup = async (id: string): Promise<SecurityGroup> => {
      const groups = await groupsWithId(id);
      assert.equal(groups.length, 1, `exactly one group ${id}: ${groups.map((g) => g.id).join(', ')}`);
      return groups[0]!;
    };
    const labelled = (name: string, app: string) => podBody('shop', name, 'node-1', { app });
    const portOf = (name: string) => waitForPort(env.client, 'shop', name);
    /** Every rule of every group of the cluster, as Neutron has them. */
    const clusterRules = async () =>
      (await env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`] })).reduce(
        (n, g) => n + g.security_group_rules.length,
        0,
      );

    it('a deleted open-egress group is made again by the next sweep, once, and new pods get the new one', async () => {
      const openEgress = groupId(groupKey({ kind: 'open', direction: 'egress' }));
      const old = await waitFor('the open-egress group made', async () => (await groupsWithId(openEgress))[0]);
      // No pod yet, so no port carries it: Neutron lets it go.
      await env.neutron.securityGroups.delete(old.id);

      await raven.gc.round();
      const made = await waitFor(
        'the open-egress group made again',
        async () => (await groupsWithId(openEgress)).find((g) => g.id !== old.id),
        { timeoutMs: HEAL_TIMEOUT_MS },
      );
      assert.deepEqual(made.security_group_rules.map(neutronRuleText).sort(), [
        'egress IPv4 any any',
        'egress IPv6 any any',
      ]);
      await env.client.create(resources.pods, labelled('first', 'web'), { namespace: 'shop' });
      const port = await env.neutron.ports.get(await portOf('first'));
      assert.ok(port.security_groups.includes(made.id), 'the new pod carries the group made again');
      // Another sweep finds nothing to heal: still exactly this one copy.
      await raven.gc.round();
      assert.equal((await onlyGroup(openEgress)).id, made.id);
    });

    it("a rule deleted from a policy's group is made again by the next sweep, once, and the metric counts what Neutron holds", async () => {
      await env.client.create(resources.pods, labelled('web', 'web'), { namespace: 'shop' });
      await env.client.create(resources.pods, labelled('db', 'db'), { namespace: 'shop' });
      await createPolicy(env.client, 'shop', 'db-from-web', {
        podSelector: { matchLabels: { app: 'db' } },
        ingress: [{ from: [{ podSelector: { matchLabels: { app: 'web' } } }], ports: [{ port: 5432 }] }],
      });
      const db = groupId('pods|ns=shop|pods=app=db');
      const web = groupId('pods|ns=shop|pods=app=web');
      const want = await waitFor('the policy translated', async () => {
        const [dbGroup, webGroup] = [(await groupsWithId(db))[0], (await groupsWithId(web))[0]];
        const text = webGroup && `ingress IPv4 tcp:5432-5432 group=${webGroup.id}`;
        return dbGroup?.security_group_rules.some((r) => neutronRuleText(r) === text) ? text : undefined;
      });
      await portOf('db');
      const rule = (await onlyGroup(db)).security_group_rules.find((r) => neutronRuleText(r) === want)!;
      await env.neutron.securityGroupRules.delete(rule.id);

      await raven.gc.round();
      await waitFor(
        'the rule made again',
        async () => (await onlyGroup(db)).security_group_rules.some((r) => neutronRuleText(r) === want),
        { timeoutMs: HEAL_TIMEOUT_MS },
      );
      const texts = (await onlyGroup(db)).security_group_rules.map(neutronRuleText);
      assert.deepEqual(texts, [want], 'exactly the policy rule, once');
      const metric = await raven.metrics.registry.getSingleMetricAsString('raven_security_group_rules');
      assert.match(metric, new RegExp(`^raven_security_group_rules ${await clusterRules()}$`, 'm'));
    });

    it("a second copy of a group (a lost create's answer) is swept; the record's copy stays", async () => {
      const db = groupId('pods|ns=shop|pods=app=db');
      const kept = await onlyGroup(db);
      const copy = await env.neutron.securityGroups.create({ name: kept.name, description: kept.description });
      await env.neutron.tags.replace('security-groups', copy.id, [...kept.tags]);
      assert.equal((await groupsWithId(db)).length, 2);

      await raven.gc.round();
      assert.equal((await onlyGroup(db)).id, kept.id);
    });
  },
);
