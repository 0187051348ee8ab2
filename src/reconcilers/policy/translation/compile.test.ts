import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { formatCidr } from '../../../core/index.ts';
import type { NetworkPolicy } from '../../../kube/api/index.ts';
import { compilePolicy, isolationOf, podSetKey, PolicyError } from './compile.ts';
import { neutronRuleText, ruleCreate, ruleText } from './rules.ts';

const np = (spec: NetworkPolicy['spec']): NetworkPolicy => ({
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: { namespace: 'x', name: 'p' },
  spec,
});

describe('compilePolicy', () => {
  it('defaults policyTypes as the API server does: Ingress, plus Egress when there are egress rules', () => {
    assert.deepEqual([...compilePolicy(np({ podSelector: {} })).isolates], ['ingress']);
    assert.deepEqual([...compilePolicy(np({ podSelector: {}, egress: [{}] })).isolates], ['ingress', 'egress']);
    assert.deepEqual([...compilePolicy(np({ podSelector: {}, policyTypes: ['Egress'] })).isolates], ['egress']);
    // An absent podSelector is the empty one: every pod of the namespace.
    assert.equal(podSetKey(compilePolicy(np(undefined)).target), 'ns=x|pods=');
  });

  it('ignores the rules of a direction the policy does not isolate', () => {
    const c = compilePolicy(np({ podSelector: {}, policyTypes: ['Egress'], ingress: [{}], egress: [{ ports: [{}] }] }));
    assert.deepEqual(c.ingress, []);
    assert.deepEqual(c.egress, [{ ports: [{ protocol: 'TCP' }] }]);
  });

  it('reads peers: podSelector in the policy namespace, namespaceSelector (AND with podSelector), ipBlock', () => {
    const c = compilePolicy(
      np({
        podSelector: { matchLabels: { app: 'db' } },
        ingress: [
          {
            from: [
              { podSelector: { matchLabels: { app: 'web' } } },
              { namespaceSelector: { matchLabels: { team: 'a' } }, podSelector: { matchLabels: { app: 'web' } } },
              { namespaceSelector: {} },
              { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } },
            ],
            ports: [{ port: 80 }, { protocol: 'UDP', port: 'dns' }, { protocol: 'SCTP', port: 1000, endPort: 2000 }],
          },
        ],
      }),
    );
    const [rule] = c.ingress;
    const peers = rule!.peers!.map((p) =>
      'set' in p ? podSetKey(p.set) : `${formatCidr(p.block.cidr)}-${p.block.except.map(formatCidr).join()}`,
    );
    assert.deepEqual(peers, ['ns=x|pods=app=web', 'nss=team=a|pods=app=web', 'nss=|pods=', '10.0.0.0/8-10.1.0.0/16']);
    assert.deepEqual(rule!.ports, [
      { protocol: 'TCP', port: 80 },
      { protocol: 'UDP', port: 'dns' },
      { protocol: 'SCTP', port: 1000, endPort: 2000 },
    ]);
    // An empty from or ports list matches everything.
    assert.deepEqual(compilePolicy(np({ podSelector: {}, ingress: [{ from: [], ports: [] }] })).ingress, [{}]);
    // A numeric string is a number.
    assert.deepEqual(compilePolicy(np({ podSelector: {}, ingress: [{ ports: [{ port: '8080' }] }] })).ingress, [
      { ports: [{ protocol: 'TCP', port: 8080 }] },
    ]);
  });

  it('refuses what validation would have refused, with a stable code and where', () => {
    const bad = (spec: NetworkPolicy['spec'], pattern: RegExp) =>
      assert.throws(
        () => compilePolicy(np(spec)),
        (err: unknown) =>
          err instanceof PolicyError && err.code === 'NETWORK_POLICY_INVALID' && pattern.test(err.message),
      );
    bad({ podSelector: {}, ingress: [{ ports: [{ protocol: 'ICMP' }] }] }, /ports\[0\]\.protocol/);
    bad({ podSelector: {}, ingress: [{ ports: [{ port: 'http', endPort: 90 }] }] }, /endPort: may not be used/);
    bad({ podSelector: {}, ingress: [{ ports: [{ port: 90, endPort: 80 }] }] }, /endPort: must be/);
    bad({ podSelector: {}, ingress: [{ ports: [{ port: 0 }] }] }, /port number/);
    bad({ podSelector: {}, ingress: [{ from: [{}] }] }, /must specify a peer/);
    bad({ podSelector: {}, ingress: [{ from: [{ ipBlock: { cidr: '10.0.0.0/8' }, podSelector: {} }] }] }, /combined/);
    bad({ podSelector: {}, egress: [{ to: [{ ipBlock: { cidr: '10.0.0.0/8', except: ['x'] } }] }] }, /except\[0\]/);
    bad({ podSelector: { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] } }, /spec\.podSelector/);
  });

  it('isolationOf keeps whom a broken policy selects (fail closed), unless its podSelector is broken too', () => {
    const broken = np({ podSelector: {}, policyTypes: ['Ingress', 'Egress'], ingress: [{ ports: [{ port: -1 }] }] });
    assert.deepEqual([...isolationOf(broken)!.isolates], ['ingress', 'egress']);
    assert.equal(
      isolationOf(np({ podSelector: { matchExpressions: [{ key: 'a', operator: 'In', values: [] }] } })),
      undefined,
    );
  });
});

describe('rule texts', () => {
  it('are equal for a desired rule and the rule Neutron answers with (any-prefix and normalised CIDRs)', () => {
    const desired = {
      direction: 'ingress' as const,
      ethertype: 'IPv4' as const,
      protocol: 'tcp' as const,
      min: 80,
      max: 81,
    };
    const answered = {
      id: 'r',
      project_id: 'p',
      tenant_id: 'p',
      security_group_id: 'g',
      direction: 'ingress' as const,
      ethertype: 'IPv4' as const,
      protocol: 'tcp',
      port_range_min: 80,
      port_range_max: 81,
      remote_ip_prefix: '0.0.0.0/0',
      normalized_cidr: '0.0.0.0/0',
      remote_group_id: null,
      description: null,
      revision_number: 0,
      created_at: '',
      updated_at: '',
    };
    assert.equal(neutronRuleText(answered), ruleText(desired, null));
    assert.equal(
      neutronRuleText({ ...answered, remote_ip_prefix: '10.1.2.3/8', normalized_cidr: '10.0.0.0/8' }),
      ruleText({ ...desired, remotePrefix: '10.0.0.0/8' }, null),
    );
    assert.equal(
      neutronRuleText({ ...answered, remote_ip_prefix: null, normalized_cidr: null, remote_group_id: 'n1' }),
      ruleText(desired, 'n1'),
    );
    assert.deepEqual(ruleCreate('g', { ...desired, remoteGroup: 'k' }, 'n1'), {
      security_group_id: 'g',
      direction: 'ingress',
      ethertype: 'IPv4',
      protocol: 'tcp',
      port_range_min: 80,
      port_range_max: 81,
      remote_group_id: 'n1',
    });
  });
});
