/**
 * Custom resources against their CRD's structural `openAPIV3Schema`, as the real server treats them: defaults are
 * filled, unknown fields are pruned (unless `x-kubernetes-preserve-unknown-fields`), then the value is validated
 * (type, required, enum, bounds, lengths, pattern, item and property counts) with kube-openapi's messages.
 * `apiVersion`, `kind` and `metadata` at the root are the server's business and left alone.
 */
import { isPlainObject, type KubeObject } from '../../../../src/kube/api/index.ts';
import { invalid, notSupported, required, type FieldCause } from './field.ts';

/** The subset of an OpenAPI v3 schema that structural CRD schemas use. */
export interface StructuralSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Record<string, StructuralSchema>;
  additionalProperties?: StructuralSchema | boolean;
  items?: StructuralSchema;
  required?: string[];
  enum?: unknown[];
  nullable?: boolean;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
}

const rootOwned = new Set(['apiVersion', 'kind', 'metadata']);

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Fills `default`s of absent properties, recursively (structural defaulting). Mutates `value`. */
function applyDefaults(value: unknown, schema: StructuralSchema): void {
  if (isPlainObject(value)) {
    for (const [key, child] of Object.entries(schema.properties ?? {})) {
      if (value[key] === undefined && child.default !== undefined) value[key] = structuredClone(child.default);
      if (value[key] !== undefined) applyDefaults(value[key], child);
    }
    if (isPlainObject(schema.additionalProperties)) {
      const child = schema.additionalProperties;
      for (const [key, v] of Object.entries(value)) if (!schema.properties?.[key]) applyDefaults(v, child);
    }
  } else if (Array.isArray(value) && schema.items) {
    for (const item of value) applyDefaults(item, schema.items);
  }
}

/** Drops fields the schema does not declare. Mutates `value`. */
function prune(value: unknown, schema: StructuralSchema, atRoot: boolean): void {
  if (Array.isArray(value)) {
    if (schema.items) for (const item of value) prune(item, schema.items, false);
    return;
  }
  if (
    !isPlainObject(value) ||
    schema['x-kubernetes-preserve-unknown-fields'] ||
    schema['x-kubernetes-embedded-resource']
  )
    return;
  for (const key of Object.keys(value)) {
    if (atRoot && rootOwned.has(key)) continue;
    const child =
      schema.properties?.[key] ??
      (isPlainObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
    if (child) prune(value[key], child, false);
    else if (schema.additionalProperties !== true) delete value[key];
  }
}

function typeMatches(value: unknown, schema: StructuralSchema): boolean {
  if (schema['x-kubernetes-int-or-string']) return Number.isInteger(value) || typeof value === 'string';
  switch (schema.type) {
    case 'object':
      return isPlainObject(value);
    case 'array':
      return Array.isArray(value);
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    default:
      return true;
  }
}

function validateValue(value: unknown, schema: StructuralSchema, path: string, causes: FieldCause[]): void {
  if (value === null) {
    if (!schema.nullable && schema.type)
      causes.push(invalid(path, value, `${path} in body must be of type ${schema.type}: "null"`));
    return;
  }
  if (!typeMatches(value, schema)) {
    const actual = Array.isArray(value) ? 'array' : Number.isInteger(value) ? 'integer' : typeof value;
    causes.push(
      invalid(
        path,
        value,
        `${path} in body must be of type ${schema['x-kubernetes-int-or-string'] ? 'integer or string' : schema.type}: "${actual}"`,
      ),
    );
    return;
  }
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    causes.push(
      notSupported(
        path,
        value,
        schema.enum.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))),
      ),
    );
  }
  if (typeof value === 'number') {
    if (schema.maximum !== undefined && (schema.exclusiveMaximum ? value >= schema.maximum : value > schema.maximum)) {
      causes.push(
        invalid(
          path,
          value,
          `${path} in body should be less than ${schema.exclusiveMaximum ? '' : 'or equal to '}${schema.maximum}`,
        ),
      );
    }
    if (schema.minimum !== undefined && (schema.exclusiveMinimum ? value <= schema.minimum : value < schema.minimum)) {
      causes.push(
        invalid(
          path,
          value,
          `${path} in body should be greater than ${schema.exclusiveMinimum ? '' : 'or equal to '}${schema.minimum}`,
        ),
      );
    }
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.maxLength !== undefined && length > schema.maxLength)
      causes.push(invalid(path, value, `${path} in body should be at most ${schema.maxLength} chars long`));
    if (schema.minLength !== undefined && length < schema.minLength)
      causes.push(invalid(path, value, `${path} in body should be at least ${schema.minLength} chars long`));
    if (schema.pattern !== undefined && !safeRegExp(schema.pattern)?.test(value))
      causes.push(invalid(path, value, `${path} in body should match '${schema.pattern}'`));
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      causes.push(invalid(path, value.length, `${path} in body should have at most ${schema.maxItems} items`));
    if (schema.minItems !== undefined && value.length < schema.minItems)
      causes.push(invalid(path, value.length, `${path} in body should have at least ${schema.minItems} items`));
    if (schema.items) value.forEach((item, i) => validateValue(item, schema.items!, `${path}[${i}]`, causes));
  }
  if (isPlainObject(value)) {
    const keys = Object.keys(value);
    if (schema.maxProperties !== undefined && keys.length > schema.maxProperties)
      causes.push(invalid(path, keys.length, `${path} in body should have at most ${schema.maxProperties} properties`));
    if (schema.minProperties !== undefined && keys.length < schema.minProperties)
      causes.push(
        invalid(path, keys.length, `${path} in body should have at least ${schema.minProperties} properties`),
      );
    for (const name of schema.required ?? []) if (value[name] === undefined) causes.push(required(join(path, name)));
    for (const [key, v] of Object.entries(value)) {
      if (path === '' && rootOwned.has(key)) continue;
      const child =
        schema.properties?.[key] ??
        (isPlainObject(schema.additionalProperties) ? schema.additionalProperties : undefined);
      if (child) validateValue(v, child, join(path, key), causes);
    }
  }
}

function safeRegExp(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}

/**
 * Defaults, prunes (both in place) and validates a custom resource against its version's schema; returns the causes
 * (empty when valid). A missing schema accepts anything.
 */
export function admitCustomResource(obj: KubeObject, schema: unknown): FieldCause[] {
  if (!isPlainObject(schema)) return [];
  const structural = schema as StructuralSchema;
  applyDefaults(obj, structural);
  prune(obj, structural, true);
  const causes: FieldCause[] = [];
  validateValue(obj, structural, '', causes);
  return causes;
}
