import { isObject } from '../http.ts';
import { nerr, pyStr } from './errors.ts';

/**
 * Request body checks in the order Neutron's API layer makes them (`neutron/api/v2/base.py` `prepare_request_body`):
 * resource key, unknown attributes, attributes not allowed for the method, conversion, required attributes.
 */
export type AttrType = 'string' | 'boolean' | 'int' | 'list' | 'dict' | 'any';

export interface AttrSpec {
  /** Allowed in POST. */
  post: boolean;
  /** Allowed in PUT. */
  put: boolean;
  type: AttrType;
  required?: boolean;
  /** null is accepted (and stored). */
  nullable?: boolean;
  /** `type:string` with a maximum length (name, description, device_id, device_owner: 255). */
  maxLen?: number;
  /** `type:values`: the value must be one of these. */
  values?: readonly unknown[];
  /** Any further validator: returns the reason (as neutron-lib words it) when the value is invalid. */
  validate?: (value: unknown) => string | undefined;
}

export type AttrSpecs = Record<string, AttrSpec>;

/** Shorthands for the specs tables. */
export const rw = (type: AttrType, extra: Partial<AttrSpec> = {}): AttrSpec => ({
  post: true,
  put: true,
  type,
  ...extra,
});
export const createOnly = (type: AttrType, extra: Partial<AttrSpec> = {}): AttrSpec => ({
  post: true,
  put: false,
  type,
  ...extra,
});
export const readOnly = (type: AttrType): AttrSpec => ({ post: false, put: false, type });

/** The attributes every standard-attr resource has. */
export const stdSpecs: AttrSpecs = {
  id: readOnly('string'),
  project_id: createOnly('string'),
  tenant_id: createOnly('string'),
  description: rw('string', { maxLen: 255 }),
  tags: readOnly('list'),
  created_at: readOnly('string'),
  updated_at: readOnly('string'),
  revision_number: readOnly('int'),
};

/** oslo's `bool_from_string(strict=True)`, as neutron-lib's `convert_to_boolean` uses it. */
const trueStrings = new Set(['1', 't', 'true', 'on', 'y', 'yes']);
const falseStrings = new Set(['0', 'f', 'false', 'off', 'n', 'no']);

/**
 * `convert_to_boolean`: a bool, or what oslo reads as one; else InvalidInput (a converter error, not HTTPBadRequest).
 */
export function toBoolean(value: unknown): boolean {
  if (typeof value === 'boolean') return value;
  const word = pyStr(value).trim().toLowerCase();
  if (trueStrings.has(word)) return true;
  if (falseStrings.has(word)) return false;
  throw nerr.invalidInput(`'${pyStr(value)}' cannot be converted to boolean`);
}

/** `convert_to_int`: Python's `int()` (which truncates floats and trims blanks); else InvalidInput. */
export function toInt(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return Math.trunc(value);
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value)) return Number(value.trim());
  throw nerr.invalidInput(`'${pyStr(value)}' is not an integer`);
}

/** oslo's `is_uuid_like` (neutron-lib's `type:uuid`): dashes and braces optional, any case. */
export function isUuidLike(value: unknown): value is string {
  return (
    typeof value === 'string' && /^\{?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\}?$/i.test(value)
  );
}

/** neutron-lib's `validate_string` (with an optional maximum length): the reason, or undefined when valid. */
export function stringProblem(value: unknown, maxLen?: number): string | undefined {
  if (typeof value !== 'string') return `'${pyStr(value)}' is not a valid string`;
  // Python counts code points.
  if (maxLen !== undefined && [...value].length > maxLen) return `'${value}' exceeds maximum length of ${maxLen}`;
  return undefined;
}

/** `validate_list_of_unique_strings`: the reason, or undefined when valid. */
export function uniqueStringsProblem(value: unknown, maxLen?: number): string | undefined {
  if (!Array.isArray(value)) return `'${pyStr(value)}' is not a list`;
  const seen = new Set<string>();
  const dups: string[] = [];
  for (const v of value) {
    const key = pyStr(v);
    if (seen.has(key) && !dups.includes(key)) dups.push(key);
    seen.add(key);
  }
  if (dups.length > 0) return `Duplicate items in the list: '${dups.join(', ')}'`;
  for (const v of value) {
    const problem = stringProblem(v, maxLen);
    if (problem) return problem;
  }
  return undefined;
}

function convert(name: string, spec: AttrSpec, value: unknown): unknown {
  if (value === null && spec.nullable) return null;
  let out = value;
  switch (spec.type) {
    case 'string': {
      const problem = stringProblem(value, spec.maxLen);
      if (problem) throw nerr.invalidAttr(name, problem);
      break;
    }
    case 'boolean':
      out = toBoolean(value);
      break;
    case 'int':
      out = toInt(value);
      break;
    case 'list':
      if (!Array.isArray(value)) throw nerr.invalidAttr(name, `'${pyStr(value)}' is not a list`);
      break;
    case 'dict':
      if (!isObject(value)) throw nerr.invalidAttr(name, `'${pyStr(value)}' is not a dictionary`);
      break;
    case 'any':
      break;
  }
  if (spec.values && !spec.values.includes(out)) throw nerr.invalidAttr(name, `${pyStr(out)} is not in valid_values`);
  const problem = spec.validate?.(out);
  if (problem) throw nerr.invalidAttr(name, problem);
  return out;
}

/** Checks one resource's attributes; returns them converted. */
export function checkAttributes(
  attrs: unknown,
  specs: AttrSpecs,
  method: 'POST' | 'PUT',
  singular = 'resource',
): Record<string, unknown> {
  if (!isObject(attrs)) throw nerr.badRequest(`Object '${singular}' contains invalid data`);
  const unknown = Object.keys(attrs).filter((k) => !(k in specs));
  if (unknown.length > 0) throw nerr.badRequest(`Unrecognized attribute(s) '${unknown.join(', ')}'`);
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(attrs)) {
    const spec = specs[name]!;
    if (method === 'POST' && !spec.post) throw nerr.badRequest(`Attribute '${name}' not allowed in POST`);
    if (method === 'PUT' && !spec.put) throw nerr.badRequest(`Cannot update read-only attribute ${name}`);
    out[name] = convert(name, spec, value);
  }
  if (method === 'POST') {
    for (const [name, spec] of Object.entries(specs)) {
      if (spec.required && !(name in out))
        throw nerr.badRequest(`Failed to parse request. Required attribute '${name}' not specified`);
    }
  }
  return out;
}

/** Python falsiness of a JSON value (`if not body[collection]`). */
function falsy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length === 0;
  if (isObject(value)) return Object.keys(value).length === 0;
  return value === undefined || value === null || value === false || value === 0 || value === '';
}

/**
 * Unwraps `{"port": {...}}` (one) or `{"ports": [...]}` (bulk, POST only) and checks each item, as Zed's pecan
 * `BodyValidationHook` and `prepare_request_body` do: a body that is not a JSON object is "invalid data"; one with
 * neither key is passed over (POST then answers "Unable to find"; PUT does so only after the resource lookup, so a
 * missing resource is a 404 first: `items` is empty and the handler calls {@link updateAttributes} after its lookup).
 * A bulk item may itself be wrapped (`{"ports": [{"port": {...}}]}`). Collections without bulk support (routers,
 * floating IPs) and every PUT refuse the plural form. Returns the items and whether the request was a bulk one (the
 * response shape follows it).
 */
export function parseResourceBody(
  body: unknown,
  singular: string,
  plural: string,
  specs: AttrSpecs,
  method: 'POST' | 'PUT',
  allowBulk = true,
): { items: Record<string, unknown>[]; bulk: boolean } {
  if (body !== undefined && !isObject(body)) throw nerr.badRequest('Body contains invalid data');
  if (body === undefined || (!(singular in body) && !(plural in body))) {
    if (method === 'POST') throw unableToFind(singular);
    return { items: [], bulk: false };
  }
  if (plural in body) {
    if (method === 'PUT' || !allowBulk) throw nerr.badRequest('Bulk operation not supported');
    const list = body[plural];
    if (falsy(list)) throw nerr.badRequest('Resources required');
    // Python iterates what it is given: a string's characters, a dict's keys; a number is a TypeError.
    if (!Array.isArray(list) && typeof list !== 'string' && !isObject(list))
      throw nerr.badRequest('Body contains invalid data');
    const items: unknown[] = Array.isArray(list) ? list : typeof list === 'string' ? [...list] : Object.keys(list);
    return {
      items: items.map((item) => {
        if (item === null || (typeof item !== 'object' && typeof item !== 'string'))
          throw nerr.badRequest('Body contains invalid data');
        return checkAttributes(isObject(item) && singular in item ? item[singular] : item, specs, method, singular);
      }),
      bulk: true,
    };
  }
  const one = body[singular];
  if (one === undefined || one === null) throw unableToFind(singular);
  return { items: [checkAttributes(one, specs, method, singular)], bulk: false };
}

const unableToFind = (singular: string) => nerr.badRequest(`Unable to find '${singular}' in request body`);

/** A PUT's attributes, once the resource is known to exist: "Unable to find" when the body had no resource key. */
export function updateAttributes(items: Record<string, unknown>[], singular: string): Record<string, unknown> {
  const attrs = items[0];
  if (!attrs) throw unableToFind(singular);
  return attrs;
}
