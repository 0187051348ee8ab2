// Strategic merge patches shaped exactly as kubectl 1.20 sends them (`kubectl apply`'s three-way patch, and
// `kubectl patch --type=strategic`), applied to live objects carrying server-set fields, with the built-in schemas.
import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { strategicSchemaFor } from './builtin-schemas.ts';
import { applyStrategicMergePatch } from './strategic.ts';
import { assertUnshared, frozen } from '../../../../test/support/patch.ts';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

function patchKind(kind: string, live: unknown, patch: unknown, group = ''): unknown {
  const schema = strategicSchemaFor(group, kind);
  assert.ok(schema, `${group}/${kind} has a schema`);
  const result = applyStrategicMergePatch(frozen(live), frozen(patch), schema);
  assertUnshared(result);
  return result;
}

const containerA = {
  name: 'a',
  image: 'nginx:1.1',
  env: [
    { name: 'X', value: '1' },
    { name: 'Y', value: '2' },
  ],
  ports: [{ containerPort: 80, protocol: 'TCP' }],
  volumeMounts: [{ name: 'data', mountPath: '/data' }],
  imagePullPolicy: 'IfNotPresent',
  terminationMessagePath: '/dev/termination-log',
};
const containerB = { name: 'b', image: 'busybox', command: ['sleep', '3600'], imagePullPolicy: 'Always' };
const livePod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {
    name: 'web',
    namespace: 'default',
    uid: 'u-pod',
    resourceVersion: '7',
    labels: { app: 'web' },
    annotations: { [LAST_APPLIED]: '{"old":true}\n' },
    finalizers: ['raven.io/port'],
    ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs1', uid: 'u-rs1' }],
  },
  spec: {
    containers: [containerA, containerB],
    volumes: [{ name: 'data', emptyDir: {} }],
    tolerations: [
      { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
    ],
    nodeName: 'n1',
  },
  status: {
    phase: 'Running',
    conditions: [
      { type: 'Initialized', status: 'True' },
      { type: 'Ready', status: 'True' },
    ],
    podIP: '10.0.0.5',
    podIPs: [{ ip: '10.0.0.5' }],
  },
};

/** livePod with its spec changed by `spec` and its annotations by `annotations`. */
function podWith(spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): unknown {
  return { ...livePod, metadata: { ...livePod.metadata, ...metadata }, spec: { ...livePod.spec, ...spec } };
}

function withoutMetadataKey(obj: unknown, key: string): unknown {
  const copy = structuredClone(obj) as { metadata: Record<string, unknown> };
  delete copy.metadata[key];
  return copy;
}

describe('kubectl apply patches on a Pod', () => {
  it('changes one container image, keeping server-set fields and the other container', () => {
    const result = patchKind('Pod', livePod, {
      metadata: { annotations: { [LAST_APPLIED]: '{"new":true}\n' } },
      spec: {
        '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }],
        containers: [{ image: 'nginx:1.2', name: 'a' }],
      },
    });
    assert.deepEqual(
      result,
      podWith(
        { containers: [{ ...containerA, image: 'nginx:1.2' }, containerB] },
        { annotations: { [LAST_APPLIED]: '{"new":true}\n' } },
      ),
    );
  });

  it('deletes a container with {"$patch":"delete","name":"b"}', () => {
    const result = patchKind('Pod', livePod, {
      spec: { '$setElementOrder/containers': [{ name: 'a' }], containers: [{ $patch: 'delete', name: 'b' }] },
    });
    assert.deepEqual(result, podWith({ containers: [containerA] }));
  });

  it('removes an env var, changes the image and deletes a container in one patch', () => {
    const result = patchKind('Pod', livePod, {
      spec: {
        '$setElementOrder/containers': [{ name: 'a' }],
        containers: [
          {
            '$setElementOrder/env': [{ name: 'X' }],
            env: [{ $patch: 'delete', name: 'Y' }],
            image: 'nginx:1.2',
            name: 'a',
          },
          { $patch: 'delete', name: 'b' },
        ],
      },
    });
    assert.deepEqual(
      result,
      podWith({ containers: [{ ...containerA, image: 'nginx:1.2', env: [{ name: 'X', value: '1' }] }] }),
    );
  });

  it('inserts a new container where $setElementOrder puts it', () => {
    const result = patchKind('Pod', livePod, {
      spec: {
        '$setElementOrder/containers': [{ name: 'a' }, { name: 'c' }, { name: 'b' }],
        containers: [{ image: 'redis:7', name: 'c', ports: [{ containerPort: 6379 }] }],
      },
    });
    const c = { image: 'redis:7', name: 'c', ports: [{ containerPort: 6379 }] };
    assert.deepEqual(result, podWith({ containers: [containerA, c, containerB] }));
  });

  it('adds an env var and changes another', () => {
    const result = patchKind('Pod', livePod, {
      spec: {
        '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }],
        containers: [
          {
            '$setElementOrder/env': [{ name: 'X' }, { name: 'Y' }, { name: 'Z' }],
            env: [
              { name: 'X', value: '10' },
              { name: 'Z', value: '3' },
            ],
            name: 'a',
          },
        ],
      },
    });
    const env = [
      { name: 'X', value: '10' },
      { name: 'Y', value: '2' },
      { name: 'Z', value: '3' },
    ];
    assert.deepEqual(result, podWith({ containers: [{ ...containerA, env }, containerB] }));
  });

  it('changes a container port (merge key containerPort) and a volume mount (merge key mountPath)', () => {
    const result = patchKind('Pod', livePod, {
      spec: {
        '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }],
        containers: [
          {
            '$setElementOrder/ports': [{ containerPort: 8080 }],
            '$setElementOrder/volumeMounts': [{ mountPath: '/data' }],
            name: 'a',
            ports: [{ containerPort: 8080 }, { $patch: 'delete', containerPort: 80 }],
            volumeMounts: [{ mountPath: '/data', readOnly: true }],
          },
        ],
      },
    });
    const a = {
      ...containerA,
      ports: [{ containerPort: 8080 }],
      volumeMounts: [{ name: 'data', mountPath: '/data', readOnly: true }],
    };
    assert.deepEqual(result, podWith({ containers: [a, containerB] }));
  });

  it('switches a volume source with $retainKeys', () => {
    const result = patchKind('Pod', livePod, {
      spec: {
        '$setElementOrder/volumes': [{ name: 'data' }],
        volumes: [{ $retainKeys: ['configMap', 'name'], configMap: { name: 'cfg' }, emptyDir: null, name: 'data' }],
      },
    });
    assert.deepEqual(result, podWith({ volumes: [{ name: 'data', configMap: { name: 'cfg' } }] }));
  });

  it('replaces tolerations and container command wholesale (no patch strategy)', () => {
    const result = patchKind('Pod', livePod, {
      spec: {
        '$setElementOrder/containers': [{ name: 'a' }, { name: 'b' }],
        containers: [{ command: ['sleep', '60'], name: 'b' }],
        tolerations: [{ key: 'k', operator: 'Exists' }],
      },
    });
    assert.deepEqual(
      result,
      podWith({
        containers: [containerA, { ...containerB, command: ['sleep', '60'] }],
        tolerations: [{ key: 'k', operator: 'Exists' }],
      }),
    );
  });

  it('adds a finalizer after the applied ones, before a server-added one', () => {
    const live = podWith({}, { finalizers: ['raven.io/port', 'server.io/x'] });
    const result = patchKind('Pod', live, {
      metadata: { '$setElementOrder/finalizers': ['raven.io/port', 'raven.io/lb'], finalizers: ['raven.io/lb'] },
    });
    assert.deepEqual(result, podWith({}, { finalizers: ['raven.io/port', 'raven.io/lb', 'server.io/x'] }));
  });

  it('drops a finalizer the configuration no longer lists', () => {
    const result = patchKind('Pod', livePod, {
      metadata: { '$deleteFromPrimitiveList/finalizers': ['raven.io/port'] },
    });
    assert.deepEqual(result, podWith({}, { finalizers: [] }));
  });
});

describe('kubectl patch --type=strategic on a Pod', () => {
  it('sets and removes labels', () => {
    const result = patchKind('Pod', livePod, { metadata: { labels: { tier: 'front', app: null } } });
    assert.deepEqual(result, podWith({}, { labels: { tier: 'front' } }));
  });

  it('merges finalizers as a set; a new one goes first, as upstream orders it', () => {
    assert.deepEqual(
      patchKind('Pod', livePod, { metadata: { finalizers: ['raven.io/lb', 'raven.io/port'] } }),
      podWith({}, { finalizers: ['raven.io/lb', 'raven.io/port'] }),
    );
    assert.deepEqual(
      patchKind('Pod', livePod, { metadata: { finalizers: ['raven.io/lb'] } }),
      podWith({}, { finalizers: ['raven.io/lb', 'raven.io/port'] }),
    );
    assert.deepEqual(
      patchKind('Pod', livePod, { metadata: { finalizers: null } }),
      withoutMetadataKey(livePod, 'finalizers'),
    );
  });

  it('merges ownerReferences by uid', () => {
    const result = patchKind('Pod', livePod, {
      metadata: {
        ownerReferences: [
          { uid: 'u-rs1', controller: true },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs2', uid: 'u-rs2' },
        ],
      },
    });
    assert.deepEqual(
      result,
      podWith(
        {},
        {
          ownerReferences: [
            { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs1', uid: 'u-rs1', controller: true },
            { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs2', uid: 'u-rs2' },
          ],
        },
      ),
    );
  });

  it('updates status conditions by type, as the kubelet does', () => {
    const result = patchKind('Pod', livePod, {
      status: {
        '$setElementOrder/conditions': [{ type: 'Initialized' }, { type: 'Ready' }, { type: 'ContainersReady' }],
        conditions: [
          { type: 'Ready', status: 'False' },
          { type: 'ContainersReady', status: 'False' },
        ],
        podIPs: [{ ip: 'fd00::5' }],
      },
    });
    assert.deepEqual(result, {
      ...livePod,
      status: {
        ...livePod.status,
        conditions: [
          { type: 'Initialized', status: 'True' },
          { type: 'Ready', status: 'False' },
          { type: 'ContainersReady', status: 'False' },
        ],
        podIPs: [{ ip: 'fd00::5' }, { ip: '10.0.0.5' }],
      },
    });
  });
});

describe('strategic patches on other built-in kinds', () => {
  const liveService = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'default' },
    spec: {
      type: 'ClusterIP',
      clusterIP: '10.96.0.10',
      clusterIPs: ['10.96.0.10'],
      selector: { app: 'web' },
      ports: [
        { name: 'http', port: 80, protocol: 'TCP', targetPort: 8080 },
        { name: 'https', port: 443, protocol: 'TCP', targetPort: 8443 },
      ],
    },
    status: { loadBalancer: {} },
  };

  it('changes a Service port number (merge key port): kubectl deletes the old port and adds the new one', () => {
    const result = patchKind('Service', liveService, {
      spec: {
        '$setElementOrder/ports': [{ port: 8000 }, { port: 443 }],
        ports: [
          { name: 'http', port: 8000, targetPort: 8080 },
          { $patch: 'delete', port: 80 },
        ],
      },
    });
    assert.deepEqual(result, {
      ...liveService,
      spec: { ...liveService.spec, ports: [{ name: 'http', port: 8000, targetPort: 8080 }, liveService.spec.ports[1]] },
    });
  });

  it('changes a Service targetPort in place and keeps defaulted fields', () => {
    const result = patchKind('Service', liveService, {
      spec: { '$setElementOrder/ports': [{ port: 80 }, { port: 443 }], ports: [{ port: 80, targetPort: 9090 }] },
    });
    assert.deepEqual(result, {
      ...liveService,
      spec: {
        ...liveService.spec,
        ports: [{ name: 'http', port: 80, protocol: 'TCP', targetPort: 9090 }, liveService.spec.ports[1]],
      },
    });
  });

  it('merges Node addresses and conditions by type, podCIDRs as a set, and replaces taints', () => {
    const node = {
      kind: 'Node',
      metadata: { name: 'n1' },
      spec: { podCIDRs: ['10.244.0.0/24'], taints: [{ key: 'a', effect: 'NoSchedule' }] },
      status: {
        addresses: [
          { type: 'InternalIP', address: '192.168.0.2' },
          { type: 'Hostname', address: 'n1' },
        ],
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    };
    const result = patchKind('Node', node, {
      spec: { podCIDRs: ['fd00:10:244::/64'], taints: [{ key: 'b', effect: 'NoExecute' }] },
      status: {
        '$setElementOrder/addresses': [{ type: 'InternalIP' }, { type: 'Hostname' }],
        addresses: [{ type: 'InternalIP', address: '192.168.0.3' }],
        conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }],
      },
    });
    assert.deepEqual(result, {
      kind: 'Node',
      metadata: { name: 'n1' },
      spec: { podCIDRs: ['fd00:10:244::/64', '10.244.0.0/24'], taints: [{ key: 'b', effect: 'NoExecute' }] },
      status: {
        addresses: [
          { type: 'InternalIP', address: '192.168.0.3' },
          { type: 'Hostname', address: 'n1' },
        ],
        conditions: [{ type: 'Ready', status: 'False', reason: 'KubeletNotReady' }],
      },
    });
  });

  it('merges ServiceAccount secrets by name and Namespace conditions by type, replacing Namespace spec.finalizers', () => {
    assert.deepEqual(
      patchKind(
        'ServiceAccount',
        { metadata: { name: 'sa' }, secrets: [{ name: 's1' }] },
        { secrets: [{ name: 's2' }] },
      ),
      { metadata: { name: 'sa' }, secrets: [{ name: 's2' }, { name: 's1' }] },
    );
    const ns = {
      metadata: { name: 'ns' },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Terminating', conditions: [{ type: 'A', status: 'True' }] },
    };
    assert.deepEqual(
      patchKind('Namespace', ns, {
        spec: { finalizers: [] },
        status: { conditions: [{ type: 'A', status: 'False' }] },
      }),
      {
        metadata: { name: 'ns' },
        spec: { finalizers: [] },
        status: { phase: 'Terminating', conditions: [{ type: 'A', status: 'False' }] },
      },
    );
  });

  it('replaces EndpointSlice endpoints and merges its metadata', () => {
    const slice = {
      metadata: { name: 's', labels: { 'kubernetes.io/service-name': 'web' } },
      endpoints: [{ addresses: ['10.0.0.1'] }],
      ports: [{ port: 80 }],
    };
    assert.deepEqual(
      patchKind(
        'EndpointSlice',
        slice,
        { metadata: { labels: { x: 'y' } }, endpoints: [{ addresses: ['10.0.0.2'] }] },
        'discovery.k8s.io',
      ),
      {
        metadata: { name: 's', labels: { 'kubernetes.io/service-name': 'web', x: 'y' } },
        endpoints: [{ addresses: ['10.0.0.2'] }],
        ports: [{ port: 80 }],
      },
    );
  });
});
