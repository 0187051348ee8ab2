import { isObject } from '../http.ts';
import { nerr, pyRepr } from './errors.ts';

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
}

export type AttrSpecs = Record<string, AttrSpec>;

/** Shorthands for the specs tables. */
export const rw = (type: AttrType, extra: Partial<AttrSpec> = {}): AttrSpec => ({ post: true, put: true, type, ...extra });
export const createOnly = (type: AttrType, extra: Partial<AttrSpec> = {}): AttrSpec => ({ post: true, put: false, type, ...extra });
export const readOnly = (type: AttrType): AttrSpec => ({ post: false, put: false, type });

/** The attributes every standard-attr resource has. */
export const stdSpecs: AttrSpecs = {
  id: readOnly('string'),
  project_id: createOnly('string'),
  tenant_id: createOnly('string'),
  description: rw('string'),
  tags: readOnly('list'),
  created_at: readOnly('string'),
  updated_at: readOnly('string'),
  revision_number: readOnly('int'),
};

function convert(name: string, spec: AttrSpec, value: unknown): unknown {
  if (value === null && spec.nullable) return null;
  switch (spec.type) {
    case 'string':
      if (typeof value !== 'string') throw nerr.invalidAttr(name, `${pyRepr(value)} is not a valid string`);
      return value;
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (value === 'true' || value === 'True' || value === 1 || value === '1') return true;
      if (value === 'false' || value === 'False' || value === 0 || value === '0') return false;
      throw nerr.invalidInput(`${pyRepr(value)} cannot be converted to boolean`);
    case 'int': {
      const n = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isInteger(n)) throw nerr.invalidInput(`${pyRepr(value)} is not an integer`);
      return n;
    }
    case 'list':
      if (!Array.isArray(value)) throw nerr.invalidAttr(name, `${pyRepr(value)} is not a list`);
      return value;
    case 'dict':
      if (!isObject(value)) throw nerr.invalidAttr(name, `${pyRepr(value)} is not a dictionary`);
      return value;
    case 'any':
      return value;
  }
}

/** Checks one resource's attributes; returns them converted. */
export function checkAttributes(attrs: unknown, specs: AttrSpecs, method: 'POST' | 'PUT'): Record<string, unknown> {
  if (!isObject(attrs)) throw nerr.badRequest('Body contains invalid data');
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
      if (spec.required && !(name in out)) throw nerr.badRequest(`Failed to parse request. Required attribute '${name}' not specified`);
    }
  }
  return out;
}

/**
 * Unwraps `{"port": {...}}` (one) or `{"ports": [...]}` (bulk, POST only) and checks each item.
 * Returns the items and whether the request was a bulk one (the response shape follows it).
 */
export function parseResourceBody(body: unknown, singular: string, plural: string, specs: AttrSpecs, method: 'POST' | 'PUT'): { items: Record<string, unknown>[]; bulk: boolean } {
  if (body === undefined) throw nerr.badRequest('Resource body required');
  if (!isObject(body)) throw nerr.badRequest('Body contains invalid data');
  if (method === 'POST' && plural in body) {
    const list = body[plural];
    if (!Array.isArray(list) || list.length === 0) throw nerr.badRequest('Resources required');
    return { items: list.map((item) => checkAttributes(item, specs, method)), bulk: true };
  }
  if (!(singular in body)) throw nerr.badRequest(`Unable to find '${singular}' in request body`);
  return { items: [checkAttributes(body[singular], specs, method)], bulk: false };
}
