/**
 * ObjectMeta and the metadata-shaped pieces other validators reuse (label maps, label selectors), after
 * apimachinery/pkg/api/validation and apis/meta/v1/validation.
 */
import {
  byteLength,
  validateDns1035Label,
  validateDns1123Label,
  validateDns1123Subdomain,
  validateLabelValue,
  validateQualifiedName,
  type ObjectMeta,
} from '../../../../src/kube/api/index.ts';
import { forbidden, invalid, invalidEach, list, record, required, str, tooLong, type FieldCause } from './field.ts';

/**
 * How `metadata.name` is checked: a DNS-1123 label (Namespace), a DNS-1123 subdomain (most kinds), a DNS-1035 label
 * (Service upstream: it must start with a letter) or a path segment (RBAC kinds: anything but `.`, `..`, `/`, `%`).
 */
export type NameRule = 'label' | 'subdomain' | 'dns1035-label' | 'path-segment';

/** Options for {@link validateObjectMeta}. */
export interface ObjectMetaOptions {
  /** The kind is namespaced: `metadata.namespace` is required; otherwise it is forbidden. */
  namespaced: boolean;
  nameRule: NameRule;
}

/** Upstream's limit on the summed length of annotation keys and values. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/**
 * The messages of a name rule. With `prefix` (a generateName), a trailing '-' is allowed, as upstream masks it
 * before checking.
 */
export function nameRuleErrors(rule: NameRule, name: string, prefix = false): string[] {
  if (rule === 'path-segment') {
    if (!prefix && (name === '.' || name === '..')) return [`may not be '${name}'`];
    return ['/', '%'].filter((c) => name.includes(c)).map((c) => `may not contain '${c}'`);
  }
  const value = prefix && name.endsWith('-') ? `${name.slice(0, -1)}a` : name;
  if (rule === 'label') return validateDns1123Label(value);
  if (rule === 'dns1035-label') return validateDns1035Label(value);
  return validateDns1123Subdomain(value);
}

/**
 * Metadata rules for create and update: a name (or generateName) that fits `nameRule`, a namespace exactly when
 * namespaced, valid label keys/values, annotation keys and total size, and qualified-name finalizers.
 * @example validateObjectMeta({ name: 'Bad' }, { namespaced: false, nameRule: 'label' })[0]?.field // 'metadata.name'
 */
export function validateObjectMeta(meta: ObjectMeta, opts: ObjectMetaOptions): FieldCause[] {
  const causes: FieldCause[] = [];
  const name = str(meta.name) ?? '';
  const generateName = str(meta.generateName) ?? '';
  if (generateName)
    causes.push(
      ...invalidEach('metadata.generateName', generateName, nameRuleErrors(opts.nameRule, generateName, true)),
    );
  if (name) causes.push(...invalidEach('metadata.name', name, nameRuleErrors(opts.nameRule, name)));
  else if (!generateName) causes.push(required('metadata.name', 'name or generateName is required'));

  const namespace = str(meta.namespace) ?? '';
  if (opts.namespaced) {
    if (!namespace) causes.push(required('metadata.namespace'));
    else causes.push(...invalidEach('metadata.namespace', namespace, validateDns1123Label(namespace)));
  } else if (namespace) {
    causes.push(forbidden('metadata.namespace', 'not allowed on this type'));
  }

  if (typeof meta.generation === 'number' && meta.generation < 0) {
    causes.push(invalid('metadata.generation', meta.generation, 'must be greater than or equal to 0'));
  }
  causes.push(...validateLabels(meta.labels, 'metadata.labels'));
  causes.push(...validateAnnotations(meta.annotations, 'metadata.annotations'));
  for (const finalizer of list(meta.finalizers)) {
    const value = str(finalizer) ?? String(finalizer);
    causes.push(...invalidEach('metadata.finalizers', value, validateQualifiedName(value)));
  }
  return causes;
}

/** A label map (metadata.labels, a Service selector, matchLabels): qualified-name keys, label values. */
export function validateLabels(labels: unknown, field: string): FieldCause[] {
  const causes: FieldCause[] = [];
  for (const [key, value] of Object.entries(record(labels) ?? {})) {
    causes.push(...invalidEach(field, key, validateQualifiedName(key)));
    if (typeof value !== 'string') causes.push(invalid(field, value, 'must be a string'));
    else causes.push(...invalidEach(field, value, validateLabelValue(value)));
  }
  return causes;
}

/** Annotation keys are qualified names compared case-insensitively; keys plus values total at most 256 KiB. */
export function validateAnnotations(annotations: unknown, field: string): FieldCause[] {
  const causes: FieldCause[] = [];
  let total = 0;
  for (const [key, value] of Object.entries(record(annotations) ?? {})) {
    causes.push(...invalidEach(field, key, validateQualifiedName(key.toLowerCase())));
    if (typeof value !== 'string') causes.push(invalid(field, value, 'must be a string'));
    total += byteLength(key) + (typeof value === 'string' ? byteLength(value) : 0);
  }
  if (total > TOTAL_ANNOTATION_SIZE_LIMIT) causes.push(tooLong(field, TOTAL_ANNOTATION_SIZE_LIMIT));
  return causes;
}

/**
 * A `metav1.LabelSelector` inside an object (NetworkPolicy, …): matchLabels as labels; each matchExpression with a
 * known operator, values only for In/NotIn, a qualified-name key and label values.
 */
export function validateLabelSelector(selector: unknown, field: string): FieldCause[] {
  const sel = record(selector);
  if (!sel) return [];
  const causes = validateLabels(sel.matchLabels, `${field}.matchLabels`);
  list(sel.matchExpressions).forEach((raw, i) => {
    const expr = record(raw) ?? {};
    const path = `${field}.matchExpressions[${i}]`;
    const values = list(expr.values);
    const op = expr.operator;
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0)
        causes.push(required(`${path}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0)
        causes.push(forbidden(`${path}.values`, "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
    } else {
      causes.push(invalid(`${path}.operator`, op ?? '', 'not a valid selector operator'));
    }
    const key = str(expr.key) ?? '';
    causes.push(...invalidEach(`${path}.key`, key, validateQualifiedName(key)));
    values.forEach((v, j) => {
      const value = str(v) ?? String(v);
      causes.push(...invalidEach(`${path}.values[${j}]`, value, validateLabelValue(value)));
    });
  });
  return causes;
}
