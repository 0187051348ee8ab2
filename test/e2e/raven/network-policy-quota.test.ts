/**
 * Issue 26, row 4: one namespace's NetworkPolicies must not use up the project's security group quota for the others.
 * Raven (`composeRaven`, as `raven run` builds it) on the embedded API server and the OpenStack simulator, with
 * `quotas.securityGroupsPerNamespace` 2 and the project's Neutron `security_group` quota set just above what the test
 * means to fit. A namespace past its share has its newest policies refused (they fail closed); another namespace's
 * pods still get their ports; a pod that waits for its own namespace's group says so on the pod; a group only another
 * namespace's policy needs (a namespaceSelector peer) never keeps a pod without a port.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import type { KubeObject } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import type { ComposedRaven } from '../../../src/daemon/compose.ts';
import { groupId, groupKey } from '../../../src/reconcilers/index.ts';
import { waitFor } from '../../support/wait.ts';
import { composeInProcess, createPolicy, podBody, ravenSettings, startEnv, waitForPort, type Env } from './support.ts';

const CLUSTER = 'sgquota';
const SHARE = 2;

interface EventObject extends KubeObject {
  type?: string;
  reason?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string };
}

describe('Security groups shared fairly between namespaces (issue 26, row 4)', { timeout: 180_000 }, () => {
  let env: Env;
  let raven: ComposedRaven;
  let stopRaven: (() => Promise<void>) | undefined;
  let project = '';

  before(async () => {
    env = await startEnv(26_004);
    const config = loadRavenConfig({
      env: {
        ...ravenSettings(CLUSTER, 'shared'),
        RAVEN_PORT_POOLS: 'false',
        RAVEN_QUOTA_SECURITY_GROUPS_PER_NAMESPACE: String(SHARE),
      },
    });
    ({ composed: raven, stop: stopRaven } = await composeInProcess(env, config));
    await env.client.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1' } });
    for (const name of ['alice', 'bob', 'carol'])
      await env.client.create(resources.namespaces, {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: { team: name } },
      });
  });
  after(async () => {
    await stopRaven?.();
    if (project) await env.neutron.quotas.reset(project).catch(() => undefined);
    await env?.stop();
  });

  const pod = (ns: string, name: string, app: string): Promise<KubeObject> =>
    env.client.create(resources.pods, podBody(ns, name, 'node-1', { app }), { namespace: ns });
  /** `app=<app>` pods accept TCP 80 from each other: one group (target and peer are one set). */
  const ownSet = (ns: string, name: string, app: string) =>
    createPolicy(env.client, ns, name, {
      podSelector: { matchLabels: { app } },
      ingress: [{ from: [{ podSelector: { matchLabels: { app } } }], ports: [{ port: 80 }] }],
    });
  const portOf = (ns: string, name: string, timeoutMs?: number) => waitForPort(env.client, ns, name, timeoutMs);
  const events = async (ns: string, name: string): Promise<EventObject[]> => {
    await raven.recorder.flush();
    return (
      await env.client.listAll<EventObject>(resources.events, {
        namespace: ns,
        fieldSelector: `involvedObject.name=${name}`,
      })
    ).items;
  };
  const groupOf = async (key: string) =>
    (await env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`, `raven.uid=${groupId(key)}`] }))[0];
  /** Sets the project's security group quota to what it uses now plus `room`. */
  const roomFor = async (room: number) => {
    if (!project) {
      const open = await waitFor('the open-ingress group', () =>
        groupOf(groupKey({ kind: 'open', direction: 'ingress' })),
      );
      project = open.project_id!;
    }
    const used = (await env.neutron.quotas.details(project)).security_group!.used;
    await env.neutron.quotas.update(project, { security_group: used + room });
  };

  it("a namespace past its share has its newest policies refused; another namespace's pod still gets its group and port", async () => {
    await waitFor('the node group', () => groupOf(groupKey({ kind: 'node', node: 'node-1' })));
    // Room for alice's share and one group of bob's: without the share alice's policies would take it all.
    await roomFor(SHARE + 1);
    for (let i = 1; i <= 15; i++) await ownSet('alice', `p${String(i).padStart(2, '0')}`, `a${i}`);
    await pod('alice', 'a3', 'a3');

    await ownSet('bob', 'web', 'web');
    await pod('bob', 'web', 'web');
    const webPort = await env.neutron.ports.get(await portOf('bob', 'web', 15_000));
    const webGroup = await groupOf('pods|ns=bob|pods=app=web');
    assert.ok(webGroup && webPort.security_groups.includes(webGroup.id), "bob's pod carries its policy's group");

    // alice's third policy is refused, with a Warning saying why; its pod is isolated (fail closed), not waiting.
    const refused = await waitFor('TranslationFailed on alice/p03', async () =>
      (await events('alice', 'p03')).find((e) => e.type === 'Warning' && e.reason === 'TranslationFailed'),
    );
    assert.match(refused.message ?? '', /quotas\.securityGroupsPerNamespace/);
    assert.equal(await groupOf('pods|ns=alice|pods=app=a3'), undefined, 'no group for a refused policy');
    const a3 = await env.neutron.ports.get(await portOf('alice', 'a3'));
    const node = await groupOf(groupKey({ kind: 'node', node: 'node-1' }));
    const openIngress = await groupOf(groupKey({ kind: 'open', direction: 'ingress' }));
    assert.ok(a3.security_groups.includes(node!.id), 'the refused policy still isolates its pod');
    assert.ok(!a3.security_groups.includes(openIngress!.id), 'the refused policy still isolates its pod');
    const alices = await env.neutron.securityGroups.list({ tags: [`raven.cluster=${CLUSTER}`] });
    assert.equal(alices.filter((g) => g.description.includes('of namespace alice')).length, SHARE);
  });

  it("a pod waiting for its own namespace's group gets a Warning Event", async () => {
    await roomFor(0);
    await ownSet('bob', 'db', 'db');
    await pod('bob', 'db', 'db');
    const warning = await waitFor('SecurityGroupsPending on bob/db', async () =>
      (await events('bob', 'db')).find((e) => e.type === 'Warning' && e.reason === 'SecurityGroupsPending'),
    );
    assert.match(warning.message ?? '', /pods\|ns=bob\|pods=app=db/);
    await roomFor(1);
    await portOf('bob', 'db', 15_000);
  });

  it("a group only another namespace's policy needs never keeps a pod without its port", async () => {
    await roomFor(0);
    // carol's policy names bob's namespace as a peer: that group cannot be made now (the project's quota is full).
    await createPolicy(env.client, 'carol', 'from-bob', {
      podSelector: { matchLabels: { app: 'c' } },
      ingress: [{ from: [{ namespaceSelector: { matchLabels: { team: 'bob' } } }] }],
    });
    await pod('bob', 'newcomer', 'other');
    await portOf('bob', 'newcomer', 15_000);
    assert.equal(await groupOf('pods|nss=team=bob|pods='), undefined, 'the peer group could not be made');
  });
});
