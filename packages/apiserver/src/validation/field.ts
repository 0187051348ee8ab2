/**
 * field.Error, the shape every validator returns: a StatusCause whose `message` is upstream's ErrorBody
 * (`Required value`, `Invalid value: "x": why`, `Unsupported value: "x": supported values: "A", "B"`…).
 */
import { goQuote, goStringSlice, type KubeObject, type StatusCause } from '../../../../src/kube/api/index.ts';

/** The cause types (metav1.CauseType) validators produce. */
export type FieldReason =
  | 'FieldValueRequired'
  | 'FieldValueInvalid'
  | 'FieldValueNotSupported'
  | 'FieldValueDuplicate'
  | 'FieldValueForbidden'
  | 'FieldValueTooLong'
  | 'FieldValueTooMany';

/** A validation failure: a StatusCause with every field set. */
export interface FieldCause extends StatusCause {
  reason: FieldReason;
  message: string;
  field: string;
}

/** Validates one kind: `old` is the stored object on update, absent on create. */
export type KindValidator = (obj: KubeObject, old?: KubeObject) => FieldCause[];

/**
 * How a bad value is printed: strings as Go's `%q`, numbers and booleans plainly, null/undefined as `null`, string
 * lists as Go's `[]string{…}`, anything else as JSON (Go would print a struct with `%#v`, which has no JSON analogue).
 */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  // An empty list has no element type to show, so it falls through to JSON.
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === 'string'))
    return goStringSlice(value);
  return JSON.stringify(value);
}

const withDetail = (body: string, detail: string | undefined): string => (detail ? `${body}: ${detail}` : body);

/** field.Required: `Required value` (plus an optional detail). */
export function required(field: string, detail?: string): FieldCause {
  return { reason: 'FieldValueRequired', field, message: withDetail('Required value', detail) };
}

/** field.Invalid: `Invalid value: <value>: <detail>`. */
export function invalid(field: string, value: unknown, detail: string): FieldCause {
  return { reason: 'FieldValueInvalid', field, message: withDetail(`Invalid value: ${formatValue(value)}`, detail) };
}

/** One field.Invalid per message, as upstream emits for name-rule failures. */
export function invalidEach(field: string, value: unknown, details: string[]): FieldCause[] {
  return details.map((d) => invalid(field, value, d));
}

/** field.NotSupported: `Unsupported value: "x": supported values: "A", "B"` (values listed as given). */
export function notSupported(field: string, value: unknown, supported: readonly string[]): FieldCause {
  const detail = supported.length > 0 ? `supported values: ${supported.map(goQuote).join(', ')}` : undefined;
  return {
    reason: 'FieldValueNotSupported',
    field,
    message: withDetail(`Unsupported value: ${formatValue(value)}`, detail),
  };
}

/** field.Duplicate: `Duplicate value: <value>`. */
export function duplicate(field: string, value: unknown): FieldCause {
  return { reason: 'FieldValueDuplicate', field, message: `Duplicate value: ${formatValue(value)}` };
}

/** field.Forbidden: `Forbidden: <detail>`. */
export function forbidden(field: string, detail: string): FieldCause {
  return { reason: 'FieldValueForbidden', field, message: withDetail('Forbidden', detail) };
}

/** field.TooLong: `Too long: must have at most N bytes` (the value is never echoed). */
export function tooLong(field: string, maxBytes: number): FieldCause {
  return { reason: 'FieldValueTooLong', field, message: `Too long: must have at most ${maxBytes} bytes` };
}

/** field.TooMany: `Too many: <actual>: must have at most N items`. */
export function tooMany(field: string, actual: number, max: number): FieldCause {
  return { reason: 'FieldValueTooMany', field, message: `Too many: ${actual}: must have at most ${max} items` };
}

/** `field is immutable` (apimachinery ValidateImmutableField) unless both values are semantically equal. */
export function immutable(field: string, value: unknown, oldValue: unknown): FieldCause[] {
  return semanticEqual(value, oldValue) ? [] : [invalid(field, value, 'field is immutable')];
}

/**
 * An empty value in Go terms: absent, null, "", 0, false, [] and an object of only such values all decode to a
 * zero value (a struct whose fields are all zero is the zero struct).
 */
export function isZero(value: unknown): boolean {
  if (value === undefined || value === null || value === '' || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  return isRecord(value) && Object.values(value).every(isZero);
}

/**
 * apiequality.Semantic.DeepEqual over JSON: an absent field equals its zero value (decoding into Go structs makes
 * them indistinguishable), and an empty list equals an absent one.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (isZero(a) && isZero(b)) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => semanticEqual(v, b[i]));
  }
  if (isRecord(a) && isRecord(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) if (!semanticEqual(a[key], b[key])) return false;
    return true;
  }
  return a === b;
}

// ---------------------------------------------------------------------------------------------------------------
// Safe readers for untrusted JSON: validators see request bodies before any schema has checked their types.

/** A plain object, or undefined. */
export function record(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) ? value : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A list, or [] for anything else. */
export function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** A string, or undefined (numbers and the like are not strings). */
export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A number, or undefined. */
export function num(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}
