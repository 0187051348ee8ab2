import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { deepFreeze } from '../../../src/core/index.ts';
import { desiredSlices, managedBy, resolveTargetPort, sliceUpToDate } from './slices.ts';
import type { Pod, PodPhase, Service } from '../../../src/kube/api/index.ts';

const svc = (extra: Partial<NonNullable<Service['spec']>> = {}): Service => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 'web', namespace: 'shop', uid: 'svc-uid' },
  spec: {
    selector: { app: 'web' },
    ports: [
      { name: 'http', port: 80, targetPort: 'web', protocol: 'TCP' },
      { name: 'metrics', port: 9090, targetPort: 9100 },
    ],
    ...extra,
  },
});

function pod(
  name: string,
  ip: string | undefined,
  opts: {
    labels?: Record<string, string>;
    webPort?: number;
    ready?: boolean;
    terminating?: boolean;
    phase?: PodPhase;
    namespace?: string;
  } = {},
): Pod {
  return {
    metadata: {
      name,
      namespace: opts.namespace ?? 'shop',
      uid: `uid-${name}`,
      labels: opts.labels ?? { app: 'web' },
      ...(opts.terminating ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}),
    },
    spec: {
      nodeName: 'node-1',
      containers: [
        { name: 'app', ports: opts.webPort ? [{ name: 'web', containerPort: opts.webPort, protocol: 'TCP' }] : [] },
      ],
    },
    status: {
      phase: opts.phase ?? 'Running',
      ...(ip ? { podIP: ip } : {}),
      conditions: [{ type: 'Ready', status: opts.ready === false ? 'False' : 'True' }],
    },
  };
}

const frozen = (pods: Pod[]) => pods.map((p) => deepFreeze(p));

describe('desiredSlices', () => {
  it('one slice of the matching pods with an IP, sorted, ports resolved, owned by the service', () => {
    const pods = frozen([
      pod('b', '10.0.0.12', { webPort: 8080 }),
      pod('a', '10.0.0.9', { webPort: 8080 }),
      pod('pending', undefined, { webPort: 8080 }),
      pod('other', '10.0.0.20', { labels: { app: 'db' }, webPort: 8080 }),
      pod('elsewhere', '10.0.0.21', { namespace: 'other', webPort: 8080 }),
      pod('done', '10.0.0.22', { phase: 'Succeeded', webPort: 8080 }),
      pod('host', '127.0.1.1', { webPort: 8080 }),
    ]);
    const [slice, ...rest] = desiredSlices(deepFreeze(svc()), pods);
    assert.equal(rest.length, 0);
    assert.match(slice!.metadata.name!, /^web-[a-z0-9]{5}$/);
    assert.deepEqual(slice!.metadata.labels, {
      'kubernetes.io/service-name': 'web',
      'endpointslice.kubernetes.io/managed-by': managedBy,
    });
    assert.deepEqual(slice!.metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'Service', name: 'web', uid: 'svc-uid', controller: true, blockOwnerDeletion: true },
    ]);
    assert.equal(slice!.addressType, 'IPv4');
    assert.deepEqual(
      slice!.endpoints!.map((e) => e.addresses[0]),
      ['10.0.0.9', '10.0.0.12'],
    );
    assert.deepEqual(slice!.endpoints![0], {
      addresses: ['10.0.0.9'],
      conditions: { ready: true, serving: true, terminating: false },
      nodeName: 'node-1',
      targetRef: { kind: 'Pod', namespace: 'shop', name: 'a', uid: 'uid-a' },
    });
    assert.deepEqual(slice!.ports, [
      { name: 'http', protocol: 'TCP', port: 8080 },
      { name: 'metrics', protocol: 'TCP', port: 9100 },
    ]);
    assert.equal(desiredSlices(deepFreeze(svc()), pods)[0]!.metadata.name, slice!.metadata.name, 'the name is stable');
  });

  it('conditions as upstream: not ready, terminating, and publishNotReadyAddresses', () => {
    const pods = frozen([
      pod('unready', '10.0.0.1', { ready: false, webPort: 1 }),
      pod('leaving', '10.0.0.2', { terminating: true, webPort: 1 }),
    ]);
    const conditions = (s: Service) => desiredSlices(deepFreeze(s), pods)[0]!.endpoints!.map((e) => e.conditions);
    assert.deepEqual(conditions(svc()), [
      { ready: false, serving: false, terminating: false },
      { ready: false, serving: true, terminating: true },
    ]);
    assert.deepEqual(conditions(svc({ publishNotReadyAddresses: true })), [
      { ready: true, serving: true, terminating: false },
      { ready: false, serving: true, terminating: true },
    ]);
  });

  it('pods resolving a named port differently get a slice each; a pod without the port serves the others', () => {
    const slices = desiredSlices(
      deepFreeze(svc()),
      frozen([pod('a', '10.0.0.1', { webPort: 8080 }), pod('b', '10.0.0.2', { webPort: 8443 }), pod('c', '10.0.0.3')]),
    );
    assert.equal(slices.length, 3);
    assert.equal(new Set(slices.map((s) => s.metadata.name)).size, 3);
    const byAddress = new Map(
      slices.map((s) => [s.endpoints![0]!.addresses[0], s.ports!.map((p) => `${p.name}:${p.port}`)]),
    );
    assert.deepEqual(byAddress.get('10.0.0.1'), ['http:8080', 'metrics:9100']);
    assert.deepEqual(byAddress.get('10.0.0.2'), ['http:8443', 'metrics:9100']);
    assert.deepEqual(byAddress.get('10.0.0.3'), ['metrics:9100']);
  });

  it('lists a dual-stack pod by its IPv4 address, whichever comes first', () => {
    const dual = pod('dual', 'fd00::1', { webPort: 80 });
    dual.status!.podIPs = [{ ip: 'fd00::1' }, { ip: '10.0.0.30' }];
    assert.deepEqual(
      desiredSlices(deepFreeze(svc()), frozen([dual, pod('v6', 'fd00::2', { webPort: 80 })]))[0]!.endpoints!.map(
        (e) => e.addresses,
      ),
      [['10.0.0.30']],
    );
  });

  it('splits at maxEndpoints, and keeps one empty slice when nothing matches', () => {
    const pods = frozen(Array.from({ length: 5 }, (_, i) => pod(`p${i}`, `10.0.1.${i + 1}`, { webPort: 80 })));
    assert.deepEqual(
      desiredSlices(deepFreeze(svc()), pods, 2).map((s) => s.endpoints!.length),
      [2, 2, 1],
    );
    const [empty, ...none] = desiredSlices(deepFreeze(svc()), []);
    assert.equal(none.length, 0);
    assert.deepEqual([empty!.endpoints, empty!.ports], [[], []]);
  });

  it('resolveTargetPort: absent → the port, a number, a numeric string, a name (protocol must match)', () => {
    const p = deepFreeze(pod('a', '10.0.0.1', { webPort: 8080 }));
    assert.equal(resolveTargetPort(p, undefined, 80, 'TCP'), 80);
    assert.equal(resolveTargetPort(p, 81, 80, 'TCP'), 81);
    assert.equal(resolveTargetPort(p, '82', 80, 'TCP'), 82);
    assert.equal(resolveTargetPort(p, 'web', 80, 'TCP'), 8080);
    assert.equal(resolveTargetPort(p, 'web', 80, 'UDP'), undefined);
  });

  it('sliceUpToDate ignores what others add (labels, server fields) but not endpoints or ports', () => {
    const [want] = desiredSlices(deepFreeze(svc()), frozen([pod('a', '10.0.0.1', { webPort: 80 })]));
    const stored = structuredClone(want!);
    stored.metadata = {
      ...stored.metadata,
      resourceVersion: '7',
      uid: 'x',
      labels: { ...stored.metadata.labels, extra: 'y' },
    };
    const changed = structuredClone(stored);
    changed.endpoints![0]!.conditions!.ready = false;
    assert.ok(sliceUpToDate(deepFreeze(stored), want!));
    assert.ok(!sliceUpToDate(deepFreeze(changed), want!));
  });
});

describe('desiredSlices for a dual-stack service', () => {
  it('makes a set of slices per ipFamily, each with the pods’ addresses of its family; the IPv4 one keeps its name', () => {
    const dual = (ips: string[]): Pod => {
      const p = pod(`p-${ips.length}-${ips[0]}`, ips[0], { webPort: 8080 });
      p.status!.podIPs = ips.map((ip) => ({ ip }));
      return p;
    };
    const pods = [dual(['10.0.0.2', 'fd00::2']), dual(['fd00::1', '10.0.0.1']), dual(['10.0.0.3'])];
    const v4only = desiredSlices(svc(), pods);
    const slices = desiredSlices(svc({ ipFamilies: ['IPv6', 'IPv4'] }), pods);
    assert.deepEqual(
      slices.map((s) => [s.addressType, (s.endpoints ?? []).map((e) => e.addresses[0])]),
      [
        ['IPv6', ['fd00::1', 'fd00::2']],
        ['IPv4', ['10.0.0.1', '10.0.0.2', '10.0.0.3']],
      ],
    );
    assert.equal(slices[1]!.metadata.name, v4only[0]!.metadata.name);
    assert.notEqual(slices[0]!.metadata.name, slices[1]!.metadata.name);
  });
});
