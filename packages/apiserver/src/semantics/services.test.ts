import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import type { Service, ServiceSpec } from '../../../../src/kube/api/index.ts';
import { PortAllocator, ServiceIpFamilies } from '../allocators/index.ts';
import { ApiError } from '../http/errors.ts';
import { serviceHooks } from './services.ts';

const svc = (spec: ServiceSpec, name = 's'): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { selector: { app: name }, ports: [{ port: 80 }], ...spec },
});

/** A create through the hooks: defaults, then allocation; the spec as stored. */
function create(ranges: ServiceIpFamilies, spec: ServiceSpec, name?: string): ServiceSpec {
  const hooks = serviceHooks(ranges, new PortAllocator('30000-30100'));
  const obj = svc(spec, name);
  hooks.defaults!(obj);
  hooks.allocate!(obj, undefined);
  return obj.spec!;
}

/** The causes of the Invalid error a create gets. */
function refused(ranges: ServiceIpFamilies, spec: ServiceSpec): string[] {
  try {
    create(ranges, spec);
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    return (err.status.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
  }
  assert.fail('expected an Invalid error');
}

describe('Service IP families (as kube-apiserver)', () => {
  const single = () => new ServiceIpFamilies('10.96.0.0/16');
  const dual = () => new ServiceIpFamilies('10.96.0.0/16,fd00:10:96::/112');
  const v6first = () => new ServiceIpFamilies(['fd00:10:96::/112', '10.96.0.0/16']);

  it('refuses a list of ranges that is not one, or one per family', () => {
    assert.throws(() => new ServiceIpFamilies('10.96.0.0/16,10.97.0.0/16'), /must be of different IP families/);
    assert.throws(() => new ServiceIpFamilies('10.96.0.0/16,fd00::/112,fd01::/112'), /one range, or two/);
  });

  it('single-stack cluster: SingleStack by default; RequireDualStack refused with upstream message; PreferDualStack falls back', () => {
    const plain = create(single(), {});
    assert.deepEqual([plain.ipFamilyPolicy, plain.ipFamilies, plain.clusterIPs?.length], ['SingleStack', ['IPv4'], 1]);
    assert.deepEqual(refused(single(), { ipFamilyPolicy: 'RequireDualStack' }), [
      'spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services',
    ]);
    const prefer = create(single(), { ipFamilyPolicy: 'PreferDualStack' });
    assert.deepEqual([prefer.ipFamilies, prefer.clusterIPs?.length], [['IPv4'], 1]);
    assert.deepEqual(refused(single(), { ipFamilies: ['IPv6'] }), [
      'spec.ipFamilies[0]: Invalid value: "IPv6": not configured on this cluster',
    ]);
    assert.deepEqual(refused(single(), { clusterIPs: ['fd00::5'] }), [
      'spec.clusterIPs[0]: Invalid value: []string{"fd00::5"}: IPv6 is not configured on this cluster',
    ]);
  });

  it('dual-stack cluster: a clusterIP per family from its range, the primary family first; families inferred from clusterIPs', () => {
    const ranges = dual();
    const both = create(ranges, { ipFamilyPolicy: 'RequireDualStack' });
    assert.deepEqual(both.ipFamilies, ['IPv4', 'IPv6']);
    assert.match(both.clusterIPs![0]!, /^10\.96\./);
    assert.match(both.clusterIPs![1]!, /^fd00:10:96::/);
    assert.equal(both.clusterIP, both.clusterIPs![0]);
    const v6 = create(ranges, { ipFamilyPolicy: 'PreferDualStack', ipFamilies: ['IPv6'] });
    assert.deepEqual(v6.ipFamilies, ['IPv6', 'IPv4']);
    assert.match(v6.clusterIP!, /^fd00:10:96::/);
    const asked = create(ranges, { clusterIPs: ['fd00:10:96::7', '10.96.0.7'], ipFamilyPolicy: 'PreferDualStack' });
    assert.deepEqual(
      [asked.ipFamilies, asked.clusterIPs],
      [
        ['IPv6', 'IPv4'],
        ['fd00:10:96::7', '10.96.0.7'],
      ],
    );
    // Without a policy, two addresses are refused as upstream does (SingleStack by default).
    assert.deepEqual(refused(ranges, { clusterIPs: ['10.96.0.8', 'fd00:10:96::8'] }), [
      "spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
    ]);
    const plain = create(ranges, {});
    assert.deepEqual([plain.ipFamilyPolicy, plain.ipFamilies, plain.clusterIPs?.length], ['SingleStack', ['IPv4'], 1]);
    // The cluster's default family is its first range's.
    assert.deepEqual(create(v6first(), { ipFamilyPolicy: 'PreferDualStack' }).ipFamilies, ['IPv6', 'IPv4']);
  });

  it('update: SingleStack releases the secondary cluster IP; reducing it without that policy is refused', () => {
    const ranges = dual();
    const hooks = serviceHooks(ranges, new PortAllocator('30000-30100'));
    const old = svc({ ipFamilyPolicy: 'RequireDualStack' });
    hooks.defaults!(old);
    hooks.allocate!(old, undefined);
    const secondary = old.spec!.clusterIPs![1]!;
    assert.ok(ranges.of('IPv6')!.has(secondary));
    const bad = structuredClone(old);
    bad.spec!.clusterIPs = bad.spec!.clusterIPs!.slice(0, 1);
    assert.throws(() => hooks.allocate!(bad, old), /must be 'SingleStack' to release the secondary cluster IP/);
    const next = structuredClone(old);
    next.spec!.ipFamilyPolicy = 'SingleStack';
    hooks.allocate!(next, old);
    assert.deepEqual([next.spec!.clusterIPs, next.spec!.ipFamilies], [old.spec!.clusterIPs!.slice(0, 1), ['IPv4']]);
    hooks.release!(next, old);
    assert.equal(ranges.of('IPv6')!.has(secondary), false);
    assert.ok(ranges.of('IPv4')!.has(next.spec!.clusterIP!));
  });

  it('headless without selector: RequireDualStack by default, both families even on a single-stack cluster, no address', () => {
    const hooks = serviceHooks(single(), new PortAllocator('30000-30100'));
    const obj: Service = { metadata: { name: 'h' }, spec: { clusterIP: 'None', ports: [{ port: 80 }] } };
    hooks.defaults!(obj);
    hooks.allocate!(obj, undefined);
    assert.deepEqual(
      [obj.spec!.ipFamilyPolicy, obj.spec!.ipFamilies, obj.spec!.clusterIPs],
      ['RequireDualStack', ['IPv4', 'IPv6'], ['None']],
    );
  });
});
