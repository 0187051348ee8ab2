import type { KubeObject } from '../../../../src/kube/api/index.ts';
import type { PrinterColumn, ResourceDef, ResourceRegistry } from '../resources/index.ts';
import type { KindHooks } from './types.ts';

interface CrdVersion {
  name: string;
  schema?: { openAPIV3Schema?: unknown };
  served?: boolean;
  storage?: boolean;
  subresources?: { status?: object };
  additionalPrinterColumns?: Array<{
    name: string;
    type: string;
    jsonPath: string;
    description?: string;
    priority?: number;
  }>;
}

interface CrdSpec {
  group: string;
  scope: 'Namespaced' | 'Cluster';
  names: {
    plural: string;
    singular?: string;
    kind: string;
    listKind?: string;
    shortNames?: string[];
    categories?: string[];
  };
  versions: CrdVersion[];
}

/** apiextensions.k8s.io/v1 CustomResourceDefinition, the fields the server reads (validated before hooks run). */
export interface CustomResourceDefinition extends KubeObject {
  spec: CrdSpec;
  status?: {
    conditions?: { type: string; status: string; lastTransitionTime?: string; reason?: string; message?: string }[];
    acceptedNames?: CrdSpec['names'];
    storedVersions?: string[];
  };
}

/** The resource a CustomResourceDefinition serves. Versions are served as-is (conversion strategy `None`). */
export function resourceDefOfCrd(crd: CustomResourceDefinition): ResourceDef {
  const spec = crd.spec;
  const served = spec.versions.filter((v) => v.served !== false);
  const first = served[0];
  const def: ResourceDef = {
    group: spec.group,
    versions: served.map((v) => v.name),
    resource: spec.names.plural,
    kind: spec.names.kind,
    singular: spec.names.singular ?? spec.names.kind.toLowerCase(),
    listKind: spec.names.listKind ?? `${spec.names.kind}List`,
    namespaced: spec.scope !== 'Cluster',
    custom: true,
    tracksGeneration: true,
    unconditionalUpdate: false,
    nameRule: 'subdomain',
  };
  const schemas = served
    .filter((v) => v.schema?.openAPIV3Schema !== undefined)
    .map((v) => [v.name, v.schema!.openAPIV3Schema] as const);
  if (schemas.length > 0) def.schemas = Object.fromEntries(schemas);
  if (spec.names.shortNames?.length) def.shortNames = spec.names.shortNames;
  if (spec.names.categories?.length) def.categories = spec.names.categories;
  if (first?.subresources?.status) def.subresources = ['status'];
  if (first?.additionalPrinterColumns?.length) {
    def.printerColumns = [
      ...first.additionalPrinterColumns.map((c): PrinterColumn => ({
        name: c.name,
        type: (['string', 'integer', 'number', 'boolean', 'date'].includes(c.type)
          ? c.type
          : 'string') as PrinterColumn['type'],
        jsonPath: c.jsonPath,
        ...(c.description ? { description: c.description } : {}),
        ...(c.priority ? { priority: c.priority } : {}),
      })),
    ];
  } else {
    def.printerColumns = [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
  }
  return def;
}

/**
 * CustomResourceDefinitions: accepted and established at once (no separate controller), their resource served
 * and discoverable from the moment the CRD is committed; deleting the CRD deletes its objects (`purge`).
 */
export function crdHooks(
  registry: ResourceRegistry,
  purge: (def: ResourceDef) => void,
  now: () => string,
): KindHooks<CustomResourceDefinition> {
  return {
    defaults(obj) {
      const spec: CrdSpec | undefined = obj.spec;
      if (!spec?.names) return;
      const time = now();
      const status = obj.status ?? {};
      const since = (type: string) => status.conditions?.find((c) => c.type === type)?.lastTransitionTime ?? time;
      obj.status = {
        conditions: [
          {
            type: 'NamesAccepted',
            status: 'True',
            lastTransitionTime: since('NamesAccepted'),
            reason: 'NoConflicts',
            message: 'no conflicts found',
          },
          {
            type: 'Established',
            status: 'True',
            lastTransitionTime: since('Established'),
            reason: 'InitialNamesAccepted',
            message: 'the initial names have been accepted',
          },
        ],
        acceptedNames: {
          ...spec.names,
          singular: spec.names.singular ?? spec.names.kind.toLowerCase(),
          listKind: spec.names.listKind ?? `${spec.names.kind}List`,
        },
        storedVersions: (spec.versions ?? []).filter((v) => v.storage).map((v) => v.name),
      };
    },
    committed(obj, old) {
      if (old) {
        const before = resourceDefOfCrd(old);
        if (before.resource !== obj.spec.names.plural) registry.remove(before.group, before.resource);
      }
      registry.add(resourceDefOfCrd(obj));
    },
    removed(obj) {
      const def = resourceDefOfCrd(obj);
      purge(def);
      registry.remove(def.group, def.resource);
    },
  };
}
