/**
 * CustomResourceDefinitions (apiextensions.k8s.io/v1), after apiextensions validation: the name is
 * `<plural>.<group>`, the names are DNS-1035 labels, the scope is known, the versions are unique with exactly one
 * storage version and a schema whose root is an object. Singular and listKind are checked as defaulted.
 */
import { validateDns1035Label, validateDns1123Subdomain, type KubeObject } from '../../../../src/kube/api/index.ts';
import { immutable, invalid, list, notSupported, record, required, str, type FieldCause } from './field.ts';

const SCOPES = ['Cluster', 'Namespaced'];

function dns1035(field: string, value: string, prefix = ''): FieldCause[] {
  const errs = validateDns1035Label(prefix ? value.toLowerCase() : value);
  return errs.length > 0 ? [invalid(field, value, prefix + errs.join(','))] : [];
}

function validateNames(namesValue: unknown): FieldCause[] {
  const names = record(namesValue) ?? {};
  const plural = str(names.plural) ?? '';
  const kind = str(names.kind) ?? '';
  // Defaulting (singular = lower(kind), listKind = kind + "List") runs before validation upstream.
  const singular = str(names.singular) || kind.toLowerCase();
  const listKind = str(names.listKind) || (kind ? `${kind}List` : '');
  const causes: FieldCause[] = [];
  if (!plural) causes.push(required('spec.names.plural'));
  if (!singular) causes.push(required('spec.names.singular'));
  if (!kind) causes.push(required('spec.names.kind'));
  if (!listKind) causes.push(required('spec.names.listKind'));
  const mixed = 'may have mixed case, but should otherwise match: ';
  if (plural) causes.push(...dns1035('spec.names.plural', plural));
  if (singular) causes.push(...dns1035('spec.names.singular', singular));
  if (kind) causes.push(...dns1035('spec.names.kind', kind, mixed));
  if (listKind) causes.push(...dns1035('spec.names.listKind', listKind, mixed));
  list(names.shortNames).forEach((s, i) => causes.push(...dns1035(`spec.names.shortNames[${i}]`, str(s) ?? String(s))));
  if (kind && kind === listKind)
    causes.push(invalid('spec.names.listKind', listKind, 'kind and listKind may not be the same'));
  return causes;
}

function validateVersions(versionsValue: unknown): FieldCause[] {
  const versions = list(versionsValue);
  const causes: FieldCause[] = [];
  const seen = new Set<string>();
  let unique = true;
  let storage = 0;
  versions.forEach((raw, i) => {
    const version = record(raw) ?? {};
    const name = str(version.name) ?? '';
    if (version.storage === true) storage++;
    if (seen.has(name)) unique = false;
    seen.add(name);
    causes.push(...dns1035(`spec.versions[${i}].name`, name));
    const schemaPath = `spec.versions[${i}].schema.openAPIV3Schema`;
    const schema = record(record(version.schema)?.openAPIV3Schema);
    if (!schema) causes.push(required(schemaPath, 'schemas are required'));
    else if (schema.type === undefined || schema.type === '')
      causes.push(required(`${schemaPath}.type`, 'must not be empty at the root'));
    else if (schema.type !== 'object')
      causes.push(invalid(`${schemaPath}.type`, schema.type, 'must be object at the root'));
  });
  if (!unique) causes.push(invalid('spec.versions', versions, 'must contain unique version names'));
  if (storage !== 1)
    causes.push(invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  return causes;
}

/**
 * CRD create and update. On update the group and plural (they make up the name) and, since the CRD is already
 * established, the scope and kind are fixed.
 */
export function validateCustomResourceDefinition(obj: KubeObject, old?: KubeObject): FieldCause[] {
  const spec = record(obj.spec) ?? {};
  const names = record(spec.names) ?? {};
  const group = str(spec.group) ?? '';
  const causes: FieldCause[] = [];
  const name = str(obj.metadata.name) ?? '';
  if (name && name !== `${str(names.plural) ?? ''}.${group}`) {
    causes.push(invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  }
  if (!group) causes.push(required('spec.group'));
  else {
    const errs = validateDns1123Subdomain(group);
    if (errs.length > 0) causes.push(invalid('spec.group', group, errs.join(',')));
    else if (!group.includes('.'))
      causes.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  const scope = spec.scope;
  if (scope === undefined || scope === null || scope === '') causes.push(required('spec.scope'));
  else if (!SCOPES.includes(scope as string)) causes.push(notSupported('spec.scope', scope, SCOPES));
  causes.push(...validateVersions(spec.versions), ...validateNames(spec.names));
  if (old) {
    const oldSpec = record(old.spec) ?? {};
    const oldNames = record(oldSpec.names) ?? {};
    causes.push(
      ...immutable('spec.scope', spec.scope, oldSpec.scope),
      ...immutable('spec.names.kind', names.kind, oldNames.kind),
      ...immutable('spec.group', spec.group, oldSpec.group),
      ...immutable('spec.names.plural', names.plural, oldNames.plural),
    );
  }
  return causes;
}
