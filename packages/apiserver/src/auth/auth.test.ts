import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { parseTokenFile, ServiceAccountTokens } from './authenticate.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { MvccStore } from '../store/index.ts';
import { authorize, forbiddenMessage, ruleAllows, type Attributes } from './rbac.ts';

const pods = (verb: string, extra: Partial<Extract<Attributes, { resourceRequest: true }>> = {}): Attributes => ({
  resourceRequest: true,
  verb,
  group: '',
  resource: 'pods',
  namespace: 'ns',
  ...extra,
});

describe('token file', () => {
  it("reads kube-apiserver's CSV: token,user,uid and quoted groups; refuses short lines and repeated tokens", () => {
    const users = parseTokenFile('# comment\n\nt1,alice,1,"dev,ops"\nt2, bob ,2\n');
    assert.deepEqual(users.get('t1'), { username: 'alice', uid: '1', groups: ['dev', 'ops', 'system:authenticated'] });
    assert.deepEqual(users.get('t2'), { username: 'bob', uid: '2', groups: ['system:authenticated'] });
    assert.throws(() => parseTokenFile('t1,alice'), /line 1/);
    assert.throws(() => parseTokenFile('t,a,1\nt,b,2'), /line 2: duplicate token/);
  });
});

describe('ServiceAccount tokens', () => {
  const sa = { namespace: 'raven-system', name: 'raven', uid: 'u-1' };
  const now = Date.UTC(2026, 0, 1);

  it('verify what they minted until it expires, under the same secret only, and not once tampered with', () => {
    const tokens = new ServiceAccountTokens('admin');
    const token = tokens.mint(sa, { audiences: ['a'], expirationSeconds: 600, now });
    assert.deepEqual(tokens.verify(token, now + 599_000), sa);
    assert.equal(tokens.verify(token, now + 600_000), undefined, 'expired');
    assert.equal(new ServiceAccountTokens('other').verify(token, now), undefined, 'another server');
    const [head, body, sig] = token.split('.');
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), sub: 'x' }),
    ).toString('base64url');
    assert.equal(tokens.verify(`${head}.${forged}.${sig}`, now), undefined, 'tampered');
    const claims = JSON.parse(Buffer.from(body!, 'base64url').toString()) as { sub: string; aud: string[] };
    assert.deepEqual([claims.sub, claims.aud], ['system:serviceaccount:raven-system:raven', ['a']]);
  });
});

describe('RBAC rules', () => {
  it('match verbs, groups, resources and subresources as upstream (RuleAllows)', () => {
    const rule = { verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] };
    assert.ok(ruleAllows(rule, pods('list')));
    assert.ok(!ruleAllows(rule, pods('delete')));
    assert.ok(!ruleAllows(rule, pods('get', { group: 'apps' })));
    assert.ok(!ruleAllows(rule, pods('get', { subresource: 'status' })), 'pods does not cover pods/status');
    assert.ok(ruleAllows({ ...rule, resources: ['pods/status'] }, pods('get', { subresource: 'status' })));
    assert.ok(ruleAllows({ ...rule, resources: ['*/status'] }, pods('get', { subresource: 'status' })));
    assert.ok(ruleAllows({ ...rule, resources: ['pods/*'] }, pods('get', { subresource: 'log' })));
    assert.ok(ruleAllows({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, pods('deletecollection')));
  });

  it('limit resourceNames to requests that name an object (never list or create)', () => {
    const rule = { verbs: ['get', 'list', 'create'], apiGroups: [''], resources: ['pods'], resourceNames: ['a'] };
    assert.ok(ruleAllows(rule, pods('get', { name: 'a' })));
    assert.ok(!ruleAllows(rule, pods('get', { name: 'b' })));
    assert.ok(!ruleAllows(rule, pods('list')));
    assert.ok(!ruleAllows(rule, pods('create')));
  });

  it('match non-resource URLs exactly or by a trailing *', () => {
    const rule = { verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] };
    const path = (p: string): Attributes => ({ resourceRequest: false, verb: 'get', path: p });
    assert.ok(ruleAllows(rule, path('/healthz')));
    assert.ok(ruleAllows(rule, path('/apis/apps/v1')));
    assert.ok(!ruleAllows(rule, path('/api')));
    assert.ok(!ruleAllows(rule, pods('get')), 'a non-resource rule grants no resource');
  });

  it("word 403s as kube-apiserver's responsewriters.Forbidden", () => {
    const user = { username: 'system:serviceaccount:a:b', groups: [] };
    assert.equal(
      forbiddenMessage(user, pods('list'), ''),
      'pods is forbidden: User "system:serviceaccount:a:b" cannot list resource "pods" in API group "" in the namespace "ns"',
    );
    assert.equal(
      forbiddenMessage(
        user,
        { resourceRequest: true, verb: 'get', group: 'apps', resource: 'deployments', subresource: 'scale', name: 'd' },
        'RBAC: x',
      ),
      'deployments.apps "d" is forbidden: User "system:serviceaccount:a:b" cannot get resource "deployments/scale" in API group "apps" at the cluster scope: RBAC: x',
    );
    assert.equal(
      forbiddenMessage(user, { resourceRequest: false, verb: 'get', path: '/apis' }, ''),
      'forbidden: User "system:serviceaccount:a:b" cannot get path "/apis"',
    );
  });
});

describe('RBAC authorizer over stored roles and bindings', () => {
  const store = new MvccStore({ historyLimit: 100 });
  const rbac = (resource: string, obj: Record<string, unknown>) =>
    store.create(`rbac.authorization.k8s.io/${resource}`, obj as unknown as KubeObject);
  rbac('clusterroles', {
    metadata: { name: 'pod-reader' },
    rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
  });
  rbac('rolebindings', {
    metadata: { name: 'read', namespace: 'a' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'pod-reader' },
    subjects: [{ kind: 'ServiceAccount', name: 'bot', namespace: 'a' }],
  });
  rbac('clusterrolebindings', {
    metadata: { name: 'dangling' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'gone' },
    subjects: [{ kind: 'Group', name: 'devs' }],
  });
  const bot = { username: 'system:serviceaccount:a:bot', groups: ['system:serviceaccounts', 'devs'] };

  it('allows through a RoleBinding to a ClusterRole in its namespace only, naming what allowed it', () => {
    assert.deepEqual(authorize(store, bot, pods('get', { namespace: 'a', name: 'p' })), {
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "read/a" of ClusterRole "pod-reader" to ServiceAccount "bot/a"',
    });
    assert.equal(authorize(store, bot, pods('get', { namespace: 'b', name: 'p' })).allowed, false);
    assert.equal(authorize(store, bot, pods('delete', { namespace: 'a', name: 'p' })).allowed, false);
  });

  it('says which bound roles are missing, and lets system:masters do anything', () => {
    assert.deepEqual(authorize(store, bot, pods('list', { namespace: 'b' })), {
      allowed: false,
      reason: 'RBAC: [clusterrole.rbac.authorization.k8s.io "gone" not found]',
    });
    assert.equal(authorize(store, { username: 'x', groups: ['system:masters'] }, pods('delete')).allowed, true);
  });
});
