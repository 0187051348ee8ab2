import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { storedAs } from '../store/index.ts';
import { coreFromEventsV1, eventsV1FieldPaths } from './events-v1.ts';
import { appsResources, rbacResources, reviewResources } from './builtin-apps-rbac.ts';
import type { PrinterColumn, ResourceDef } from './types.ts';
import { quotaColumn } from './quota-columns.ts';

const age: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

function podReady(obj: KubeObject): string {
  const pod = storedAs('/pods', obj);
  const statuses = pod.status?.containerStatuses ?? [];
  const containers = pod.spec?.containers ?? [];
  return `${statuses.filter((s) => s.ready).length}/${containers.length}`;
}

function podRestarts(obj: KubeObject): number {
  const statuses = storedAs('/pods', obj).status?.containerStatuses ?? [];
  return statuses.reduce((sum, s) => sum + (s.restartCount ?? 0), 0);
}

function podStatus(obj: KubeObject): string {
  if (obj.metadata.deletionTimestamp) return 'Terminating';
  const status = storedAs('/pods', obj).status;
  return status?.reason ?? status?.phase ?? 'Pending';
}

/** `n/m` of the pod's readiness gates whose condition is True, `<none>` without gates (the real pod printer). */
function podReadinessGates(obj: KubeObject): string {
  const pod = storedAs('/pods', obj);
  const gates = pod.spec?.readinessGates ?? [];
  if (gates.length === 0) return '<none>';
  const conditions = pod.status?.conditions ?? [];
  return `${gates.filter((g) => conditions.find((c) => c.type === g.conditionType)?.status === 'True').length}/${gates.length}`;
}

function servicePorts(obj: KubeObject): string {
  const ports = storedAs('/services', obj).spec?.ports ?? [];
  if (ports.length === 0) return '<none>';
  return ports.map((p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',');
}

function serviceExternalIp(obj: KubeObject): string {
  const svc = storedAs('/services', obj);
  const spec = svc.spec;
  const ingress = svc.status?.loadBalancer?.ingress ?? [];
  const addresses = [...ingress.map((i) => i.ip ?? i.hostname ?? ''), ...(spec?.externalIPs ?? [])].filter(Boolean);
  if (spec?.type === 'ExternalName') return spec.externalName ?? '<none>';
  if (addresses.length > 0) return addresses.join(',');
  return spec?.type === 'LoadBalancer' ? '<pending>' : '<none>';
}

function nodeStatus(obj: KubeObject): string {
  const conditions = storedAs('/nodes', obj).status?.conditions ?? [];
  const ready = conditions.find((c) => c.type === 'Ready');
  return ready?.status === 'True' ? 'Ready' : 'NotReady';
}

/**
 * The built-in kinds the embedded server serves. Field labels follow the real server's per-kind field selectors;
 * printer columns follow `kubectl get` output of a real cluster.
 */
export const builtinResources: ResourceDef[] = [
  {
    group: '',
    versions: ['v1'],
    resource: 'namespaces',
    kind: 'Namespace',
    singular: 'namespace',
    namespaced: false,
    shortNames: ['ns'],
    subresources: ['status'],
    nameRule: 'label',
    fieldLabels: ['status.phase'],
    printerColumns: [{ name: 'Status', type: 'string', jsonPath: '.status.phase' }, age],
  },
  {
    group: '',
    versions: ['v1'],
    resource: 'pods',
    kind: 'Pod',
    singular: 'pod',
    namespaced: true,
    shortNames: ['po'],
    categories: ['all'],
    subresources: ['status', 'binding'],
    fieldLabels: [
      'spec.nodeName',
      'spec.restartPolicy',
      'spec.schedulerName',
      'spec.serviceAccountName',
      'spec.hostNetwork',
      'status.phase',
      'status.podIP',
      'status.nominatedNodeName',
    ],
    printerColumns: [
      { name: 'Ready', type: 'string', jsonPath: podReady },
      { name: 'Status', type: 'string', jsonPath: podStatus },
      { name: 'Restarts', type: 'integer', jsonPath: podRestarts },
      age,
      { name: 'IP', type: 'string', jsonPath: '.status.podIP', priority: 1 },
      { name: 'Node', type: 'string', jsonPath: '.spec.nodeName', priority: 1 },
      { name: 'Nominated Node', type: 'string', jsonPath: '.status.nominatedNodeName', priority: 1 },
      { name: 'Readiness Gates', type: 'string', jsonPath: podReadinessGates, priority: 1 },
    ],
  },
  {
    group: '',
    versions: ['v1'],
    resource: 'services',
    kind: 'Service',
    singular: 'service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    subresources: ['status'],
    nameRule: 'dns1035-label',
    printerColumns: [
      { name: 'Type', type: 'string', jsonPath: '.spec.type' },
      { name: 'Cluster-IP', type: 'string', jsonPath: '.spec.clusterIP' },
      { name: 'External-IP', type: 'string', jsonPath: serviceExternalIp },
      { name: 'Port(s)', type: 'string', jsonPath: servicePorts },
      age,
      {
        name: 'Selector',
        type: 'string',
        jsonPath: (svc) =>
          Object.entries(storedAs('/services', svc).spec?.selector ?? {})
            .map(([k, v]) => `${k}=${v}`)
            .join(',') || '<none>',
        priority: 1,
      },
    ],
  },
  {
    group: '',
    versions: ['v1'],
    resource: 'endpoints',
    kind: 'Endpoints',
    singular: 'endpoints',
    namespaced: true,
    shortNames: ['ep'],
    createOnUpdate: true,
    printerColumns: [age],
  },
  {
    group: '',
    versions: ['v1'],
    resource: 'nodes',
    kind: 'Node',
    singular: 'node',
    namespaced: false,
    shortNames: ['no'],
    subresources: ['status'],
    fieldLabels: ['spec.unschedulable'],
    printerColumns: [
      { name: 'Status', type: 'string', jsonPath: nodeStatus },
      age,
      { name: 'Version', type: 'string', jsonPath: '.status.nodeInfo.kubeletVersion' },
      {
        name: 'Internal-IP',
        type: 'string',
        jsonPath: (n) =>
          (storedAs('/nodes', n).status?.addresses ?? []).find((a) => a.type === 'InternalIP')?.address ?? '<none>',
        priority: 1,
      },
    ],
  },
  {
    group: '',
    versions: ['v1'],
    resource: 'events',
    kind: 'Event',
    singular: 'event',
    namespaced: true,
    shortNames: ['ev'],
    createOnUpdate: true,
    fieldLabels: [
      'involvedObject.kind',
      'involvedObject.namespace',
      'involvedObject.name',
      'involvedObject.uid',
      'involvedObject.apiVersion',
      'involvedObject.resourceVersion',
      'involvedObject.fieldPath',
      'reason',
      'reportingComponent',
      'source',
      'type',
    ],
    printerColumns: [
      { name: 'Last Seen', type: 'date', jsonPath: '.lastTimestamp' },
      { name: 'Type', type: 'string', jsonPath: '.type' },
      { name: 'Reason', type: 'string', jsonPath: '.reason' },
      {
        name: 'Object',
        type: 'string',
        jsonPath: (e) => {
          const o = storedAs('/events', e).involvedObject;
          return `${(o?.kind ?? '').toLowerCase()}/${o?.name ?? ''}`;
        },
      },
      { name: 'Message', type: 'string', jsonPath: '.message' },
    ],
  },
  {
    group: '',
    versions: ['v1'],
    resource: 'configmaps',
    kind: 'ConfigMap',
    singular: 'configmap',
    namespaced: true,
    shortNames: ['cm'],
    printerColumns: [
      {
        name: 'Data',
        type: 'integer',
        jsonPath: (o) =>
          Object.keys((o.data as object | undefined) ?? {}).length +
          Object.keys((o.binaryData as object | undefined) ?? {}).length,
      },
      age,
    ],
  },
  {
    group: '',
    versions: ['v1'],
    resource: 'secrets',
    kind: 'Secret',
    singular: 'secret',
    namespaced: true,
    fieldLabels: ['type'],
    printerColumns: [
      { name: 'Type', type: 'string', jsonPath: '.type' },
      { name: 'Data', type: 'integer', jsonPath: (o) => Object.keys((o.data as object | undefined) ?? {}).length },
      age,
    ],
  },
  {
    group: '',
    versions: ['v1'],
    resource: 'resourcequotas',
    kind: 'ResourceQuota',
    singular: 'resourcequota',
    namespaced: true,
    shortNames: ['quota'],
    subresources: ['status'],
    printerColumns: [
      age,
      { name: 'Request', type: 'string', jsonPath: quotaColumn(false) },
      { name: 'Limit', type: 'string', jsonPath: quotaColumn(true) },
    ],
  },
  {
    group: '',
    versions: ['v1'],
    resource: 'serviceaccounts',
    kind: 'ServiceAccount',
    singular: 'serviceaccount',
    namespaced: true,
    shortNames: ['sa'],
    subresources: ['token'],
    printerColumns: [age],
  },
  {
    group: 'discovery.k8s.io',
    versions: ['v1'],
    resource: 'endpointslices',
    kind: 'EndpointSlice',
    singular: 'endpointslice',
    namespaced: true,
    fieldLabels: ['addressType'],
    printerColumns: [
      { name: 'AddressType', type: 'string', jsonPath: '.addressType' },
      {
        name: 'Endpoints',
        type: 'string',
        jsonPath: (o) =>
          ((o.endpoints as Array<{ addresses?: string[] }> | undefined) ?? [])
            .flatMap((e) => e.addresses ?? [])
            .join(',') || '<unset>',
      },
      age,
    ],
  },
  {
    group: 'coordination.k8s.io',
    versions: ['v1'],
    resource: 'leases',
    kind: 'Lease',
    singular: 'lease',
    namespaced: true,
    printerColumns: [{ name: 'Holder', type: 'string', jsonPath: '.spec.holderIdentity' }, age],
  },
  {
    group: 'networking.k8s.io',
    versions: ['v1'],
    resource: 'networkpolicies',
    kind: 'NetworkPolicy',
    singular: 'networkpolicy',
    namespaced: true,
    shortNames: ['netpol'],
    tracksGeneration: true,
    printerColumns: [age],
  },
  {
    group: 'events.k8s.io',
    versions: ['v1'],
    resource: 'events',
    kind: 'Event',
    singular: 'event',
    namespaced: true,
    storedAs: { table: '/events', toStorage: coreFromEventsV1, fieldPaths: eventsV1FieldPaths },
    shortNames: ['ev'],
    fieldLabels: [
      'regarding.kind',
      'regarding.namespace',
      'regarding.name',
      'regarding.uid',
      'reason',
      'type',
      'reportingController',
    ],
    printerColumns: [age],
  },
  {
    group: 'apiextensions.k8s.io',
    versions: ['v1'],
    resource: 'customresourcedefinitions',
    kind: 'CustomResourceDefinition',
    singular: 'customresourcedefinition',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    subresources: ['status'],
    tracksGeneration: true,
    // The real server's default table convertor: an RFC 3339 timestamp, not an age.
    printerColumns: [{ name: 'Created At', type: 'string', jsonPath: '.metadata.creationTimestamp' }],
  },
  ...appsResources,
  ...rbacResources,
  ...reviewResources,
];
