import { parseIp, parseCidr } from '../../../../src/core/index.ts';
import { isObject, octaviaError, SimHttpError } from '../http.ts';

/**
 * What Octavia's API layer (wsme + pecan) does with a request body before any controller code runs, as observed on
 * Zed (11.0.0): JSON → attribute conversion (`wsme/rest/json.py fromjson`), then each attribute's type check, in the
 * order the attributes are declared in `octavia/api/v2/types/*.py`. The messages are wsme's, word for word.
 */

export type WsType =
  | { kind: 'str'; max?: number; min?: number; pattern?: RegExp }
  | { kind: 'int'; min?: number; max?: number }
  | { kind: 'bool' }
  | { kind: 'uuid' }
  | { kind: 'ip' }
  | { kind: 'cidr' }
  | { kind: 'urlpath' }
  | { kind: 'enum'; values: readonly (string | number)[] }
  | { kind: 'list'; of: WsType }
  | { kind: 'dict'; of: WsType }
  /** A nested complex type (`{...}` with its own attributes), e.g. a graph listener's default pool. */
  | { kind: 'object'; spec: Spec; key: string }
  /** Passed through unchecked (session persistence, L7 policies, additional VIPs). */
  | { kind: 'any' };

export interface Field {
  type: WsType;
  mandatory?: boolean;
}

/** Attribute name → field, in declaration order (wsme checks them in that order). */
export type Spec = Readonly<Record<string, Field>>;

export const ws = {
  str: (max?: number, extra: { min?: number; pattern?: RegExp } = {}): WsType => ({
    kind: 'str',
    ...(max !== undefined ? { max } : {}),
    ...extra,
  }),
  int: (min?: number, max?: number): WsType => ({
    kind: 'int',
    ...(min !== undefined ? { min } : {}),
    ...(max !== undefined ? { max } : {}),
  }),
  bool: { kind: 'bool' } as WsType,
  uuid: { kind: 'uuid' } as WsType,
  ip: { kind: 'ip' } as WsType,
  cidr: { kind: 'cidr' } as WsType,
  urlpath: { kind: 'urlpath' } as WsType,
  enum: (...values: (string | number)[]): WsType => ({ kind: 'enum', values }),
  list: (of: WsType): WsType => ({ kind: 'list', of }),
  dict: (of: WsType): WsType => ({ kind: 'dict', of }),
  object: (key: string, spec: Spec): WsType => ({ kind: 'object', spec, key }),
  any: { kind: 'any' } as WsType,
};

export const optional = (type: WsType): Field => ({ type });
export const mandatory = (type: WsType): Field => ({ type, mandatory: true });

/** Python's `str()` of a JSON value (dicts and lists as their repr), as wsme puts it into messages. */
export function pyStr(v: unknown): string {
  return typeof v === 'string' ? v : pyRepr(v);
}

/** Python's `repr()` of a JSON value. */
export function pyRepr(v: unknown): string {
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'string') {
    const quote = v.includes("'") && !v.includes('"') ? '"' : "'";
    const body = v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\t/g, '\\t').replace(/\r/g, '\\r');
    return quote + (quote === "'" ? body.replace(/'/g, "\\'") : body) + quote;
  }
  if (Array.isArray(v)) return `[${v.map(pyRepr).join(', ')}]`;
  if (isObject(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${pyRepr(k)}: ${pyRepr(x)}`)
      .join(', ')}}`;
  return JSON.stringify(v) ?? 'None';
}

/** `InvalidInput`: "Invalid input for field/attribute X. Value: 'v'. why". */
export function invalidInput(field: string, value: unknown, why: string): SimHttpError {
  return octaviaError(400, `Invalid input for field/attribute ${field}. Value: '${pyStr(value)}'. ${why}`);
}

/** A Python exception that escaped to wsme: 500 with the exception text as the faultstring. */
export function serverError(message: string): SimHttpError {
  return octaviaError(500, message);
}

/** A conversion failure (`ValueError` in fromjson): reported against the whole body argument. */
class ConversionError extends Error {}

/** An unknown attribute deep in the body: the field path is filled in on the way up (`add_fieldname`). */
class UnknownAttributes extends Error {
  constructor(
    readonly names: string[],
    public path: string[] = [],
  ) {
    super('unknown attributes');
  }
}

const uuidRe = /^(urn:uuid:)?\{?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\}?$/i;
const enumTrue = new Set(['1', 'on', 'true', 't', 'y', 'yes', 'True', 'TRUE', 'On', 'ON', 'Yes', 'YES', 'T', 'Y']);
const enumFalse = new Set(['0', 'off', 'false', 'f', 'n', 'no', 'False', 'FALSE', 'Off', 'OFF', 'No', 'NO', 'F', 'N']);

function toInt(v: unknown): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'number') return Math.trunc(v);
  if (typeof v === 'string') {
    if (/^\s*[-+]?\d+\s*$/.test(v)) return Number.parseInt(v, 10);
    throw new ConversionError(`invalid literal for int() with base 10: ${pyRepr(v)}`);
  }
  throw new ConversionError(
    `int() argument must be a string, a bytes-like object or a number, not '${Array.isArray(v) ? 'list' : 'dict'}'`,
  );
}

/** fromjson + validate for one value; `name` is the attribute a type check failure is reported against. */
function convert(type: WsType, v: unknown, name: string): unknown {
  if (v === null || v === undefined) return null;
  switch (type.kind) {
    case 'any':
      return v;
    case 'str': {
      if (typeof v !== 'string') throw invalidInput(name, v, 'Value should be string');
      if (type.min !== undefined && v.length < type.min)
        throw invalidInput(name, v, `Value should have a minimum character requirement of ${type.min}`);
      if (type.max !== undefined && v.length > type.max)
        throw invalidInput(name, v, `Value should have a maximum character requirement of ${type.max}`);
      if (type.pattern && !type.pattern.test(v))
        throw invalidInput(name, v, `Value should match the pattern ${type.pattern.source}`);
      return v;
    }
    case 'int': {
      const n = toInt(v);
      if (type.min !== undefined && n < type.min)
        throw invalidInput(name, n, `Value should be greater or equal to ${type.min}`);
      if (type.max !== undefined && n > type.max)
        throw invalidInput(name, n, `Value should be lower or equal to ${type.max}`);
      return n;
    }
    case 'bool':
      if (typeof v === 'boolean') return v;
      if (typeof v === 'number') return v !== 0;
      if (typeof v === 'string' && enumTrue.has(v)) return true;
      if (typeof v === 'string' && enumFalse.has(v)) return false;
      throw new ConversionError(`Value not an unambiguous boolean: ${pyStr(v)}`);
    case 'uuid':
      if (typeof v !== 'string' || !uuidRe.test(v)) throw invalidInput(name, v, 'Value should be UUID format');
      return v;
    case 'ip':
      if (typeof v !== 'string' || !parseIp(v)) throw invalidInput(name, v, 'Value should be IPv4 or IPv6 format');
      return v;
    case 'cidr':
      if (typeof v !== 'string' || !parseCidr(v))
        throw invalidInput(name, v, 'Value should be IPv4 or IPv6 CIDR format');
      return v;
    case 'urlpath':
      if (typeof v !== 'string') throw invalidInput(name, v, 'Value should be string');
      if (!v.startsWith('/') || /\s/.test(v)) throw invalidInput(name, v, 'Value must be a valid URL Path string');
      return v;
    case 'enum': {
      const wanted = typeof type.values[0] === 'number' && typeof v === 'string' ? Number(v) : v;
      const shown = type.values.map((x) => (typeof x === 'number' && Number.isInteger(x) ? `${x}.0` : String(x)));
      if (!type.values.includes(wanted as string | number))
        throw invalidInput(name, v, `Value should be one of: ${shown.join(', ')}`);
      return wanted;
    }
    case 'list':
      if (!Array.isArray(v)) throw new ConversionError(`Value not a valid list: ${pyStr(v)}`);
      return v.map((x) => {
        if (type.of.kind === 'object') return convert(type.of, x, name);
        try {
          return convert(type.of, x, name);
        } catch (err) {
          // An element's type check is reported against the list attribute, with the whole list as the value.
          if (err instanceof SimHttpError && err.status === 400)
            throw invalidInput(
              name,
              v,
              /Value: '.*'\. (.*)$/s.exec((err.body as { faultstring: string }).faultstring)?.[1] ?? '',
            );
          throw err;
        }
      });
    case 'dict':
      if (!isObject(v)) throw new ConversionError(`Value not a valid dict: ${pyStr(v)}`);
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, convert(type.of, x, name)]));
    case 'object':
      return complex(type.spec, v);
  }
}

/** A complex type: unknown attributes first, then each declared attribute in order (mandatory ones must be there). */
function complex(spec: Spec, v: unknown): Record<string, unknown> {
  if (!isObject(v))
    throw serverError(
      `'${Array.isArray(v) ? 'list' : typeof v === 'string' ? 'str' : typeof v === 'number' ? (Number.isInteger(v) ? 'int' : 'float') : 'bool'}' object has no attribute 'keys'`,
    );
  const unknown = Object.keys(v).filter((k) => !(k in spec));
  if (unknown.length > 0) throw new UnknownAttributes(unknown);
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(spec)) {
    if (name in v) {
      try {
        out[name] = convert(field.type, v[name], name);
      } catch (err) {
        if (err instanceof UnknownAttributes) err.path.unshift(name);
        throw err;
      }
    } else if (field.mandatory) {
      throw invalidInput(name, 'None', 'Mandatory field missing.');
    }
  }
  return out;
}

function unknownMessage(err: UnknownAttributes, argname: string): SimHttpError {
  const where = [argname, ...err.path].join('.');
  return octaviaError(
    400,
    `Unknown attribute${err.names.length > 1 ? 's' : ''} for argument ${where}: ${err.names.join(', ')}`,
  );
}

export interface BodySpec {
  /** The controller's argument name (`load_balancer`, `listener_`, `members_`...). */
  argname: string;
  /** The one key of the root object (`loadbalancer`, `listener`...). */
  key: string;
  spec: Spec;
  /** The attribute the controller reads first: `{}` (an unset root) fails there with a 500. */
  firstRead: string;
}

/**
 * Parses `{"<key>": {...}}` like wsme does for a body argument: no body → 400 `Missing argument`, a root that is not
 * an object → 500, an unknown root key → 400, a missing or null inner object → 500 (the controller reads an Unset),
 * then the attribute checks. Returns the attributes given (converted), without defaults.
 */
export function parseBody(body: unknown, b: BodySpec): Record<string, unknown> {
  if (body === undefined) throw octaviaError(400, `Missing argument: "${b.argname}"`);
  try {
    if (body === null) throw serverError(`'NoneType' object has no attribute '${b.key}'`);
    if (!isObject(body)) return complex({}, body);
    const unknown = Object.keys(body).filter((k) => k !== b.key);
    if (unknown.length > 0) throw new UnknownAttributes(unknown);
    const inner = body[b.key];
    if ((inner === undefined || inner === null) && b.firstRead === '')
      throw octaviaError(400, `Validation failure: No ${b.key} object supplied.`);
    if (inner === undefined) throw serverError(`'UnsetType' object has no attribute '${b.firstRead}'`);
    if (inner === null) throw serverError(`'NoneType' object has no attribute '${b.firstRead}'`);
    try {
      return complex(b.spec, inner);
    } catch (err) {
      if (err instanceof UnknownAttributes) err.path.unshift(b.key);
      throw err;
    }
  } catch (err) {
    if (err instanceof UnknownAttributes) throw unknownMessage(err, b.argname);
    if (err instanceof ConversionError) throw invalidInput(b.argname, body, err.message);
    throw err;
  }
}

/** `PUT /pools/{id}/members {"members": [...]}`: the list of member specs. */
export function parseMemberList(body: unknown, spec: Spec): Record<string, unknown>[] {
  if (body === undefined) throw serverError("'NoneType' object has no attribute 'members'");
  try {
    if (body === null) throw serverError("'NoneType' object has no attribute 'members'");
    if (!isObject(body)) return [complex({}, body)];
    const unknown = Object.keys(body).filter((k) => k !== 'members');
    if (unknown.length > 0) throw new UnknownAttributes(unknown);
    if (body.members === undefined) throw serverError("'UnsetType' object is not iterable");
    if (body.members === null) throw serverError("'NoneType' object is not iterable");
    if (!Array.isArray(body.members)) throw new ConversionError(`Value not a valid list: ${pyStr(body.members)}`);
    return body.members.map((m) => {
      try {
        return complex(spec, m);
      } catch (err) {
        if (err instanceof UnknownAttributes) err.path.unshift('members');
        throw err;
      }
    });
  } catch (err) {
    if (err instanceof UnknownAttributes) throw unknownMessage(err, 'members_');
    if (err instanceof ConversionError) throw invalidInput('members_', body, err.message);
    throw err;
  }
}
