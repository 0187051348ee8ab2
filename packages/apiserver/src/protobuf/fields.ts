import { messageSchema, type FieldSpec, type MessageSchema, type ScalarType } from './schema.ts';

type Json = Record<string, unknown>;

/** What a JSON object holds that its kind's schema has no field for, and the first value of a wrong type. */
export interface FieldCheck {
  /** Paths as upstream writes them in warnings and strict errors: `spec.template.spec.containers[0].foo`. */
  unknown: string[];
  /** `json: cannot unmarshal …`, as Go's decoder words it, for the first value that cannot be decoded. */
  typeError?: string;
}

const goScalars: Record<ScalarType, string> = {
  string: 'string',
  i32: 'int32',
  i64: 'int64',
  bool: 'bool',
  f64: 'float64',
  bytes: '[]uint8',
  time: 'v1.Time',
  microtime: 'v1.MicroTime',
  duration: 'v1.Duration',
  quantity: 'resource.Quantity',
  intstr: 'intstr.IntOrString',
  json: 'runtime.RawExtension',
  strings: '[]string',
};

function goType(type: ScalarType | 'message', message: string | undefined): string {
  return type === 'message' ? `v1.${message!.slice(message!.indexOf('.') + 1)}` : goScalars[type];
}

function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v === 'boolean' ? 'bool' : typeof v;
}

/** Whether `v` can be decoded as one value of `type` (null always can: it decodes to the zero value). */
function typeProblem(type: ScalarType | 'message', v: unknown): string | undefined {
  if (v === null) return undefined;
  const kind = jsonKind(v);
  switch (type) {
    case 'string':
    case 'bytes':
    case 'time':
    case 'microtime':
    case 'duration':
      return kind === 'string' ? undefined : kind;
    case 'i32':
    case 'i64': {
      if (kind !== 'number') return kind;
      const n = v as number;
      const fits = Number.isInteger(n) && (type === 'i64' || (n >= -(2 ** 31) && n < 2 ** 31));
      return fits ? undefined : `number ${String(n)}`;
    }
    case 'f64':
      return kind === 'number' ? undefined : kind;
    case 'bool':
      return kind === 'bool' ? undefined : kind;
    case 'quantity':
    case 'intstr':
      return kind === 'string' || kind === 'number' ? undefined : kind;
    case 'strings':
      return kind === 'array' ? undefined : kind;
    case 'json':
      return undefined;
    case 'message':
      return kind === 'object' ? undefined : kind;
  }
}

interface Walk {
  out: FieldCheck;
  prune: boolean;
}

function fail(walk: Walk, got: string, struct: string, goPath: string, type: string): void {
  walk.out.typeError ??= `json: cannot unmarshal ${got} into Go struct field ${struct}.${goPath} of type ${type}`;
}

/** The field a JSON key names in a message, looking into inline-embedded structs too, and the struct that has it. */
function jsonField(schema: MessageSchema, key: string): { field: FieldSpec; struct: string } | undefined {
  const own = schema.byName.get(key);
  if (own && !own.inline) return { field: own, struct: schema.name.slice(schema.name.indexOf('.') + 1) };
  for (const f of schema.fields) {
    if (!f.inline) continue;
    const found = jsonField(messageSchema(f.message!)!, key);
    if (found) return found;
  }
  return undefined;
}

function walkMessage(walk: Walk, value: Json, schema: MessageSchema, path: string, goPath: string): void {
  for (const key of Object.keys(value)) {
    if (path === '' && (key === 'apiVersion' || key === 'kind')) continue;
    const found = jsonField(schema, key);
    const here = path ? `${path}.${key}` : key;
    const goHere = goPath ? `${goPath}.${key}` : key;
    if (!found) {
      walk.out.unknown.push(here);
      if (walk.prune) delete value[key];
      continue;
    }
    walkField(walk, found.field, value[key], here, goHere, found.struct);
  }
}

function walkField(walk: Walk, field: FieldSpec, v: unknown, path: string, goPath: string, struct: string): void {
  if (v === null || v === undefined) return;
  if (field.map) {
    const valueType = goType(field.map.type, field.map.message);
    if (jsonKind(v) !== 'object') return fail(walk, jsonKind(v), struct, goPath, `map[string]${valueType}`);
    for (const [k, item] of Object.entries(v as Json))
      walkValue(walk, field.map.type, field.map.message, item, `${path}[${k}]`, goPath, struct);
    return;
  }
  if (field.repeated) {
    if (!Array.isArray(v)) return fail(walk, jsonKind(v), struct, goPath, `[]${goType(field.type, field.message)}`);
    (v as unknown[]).forEach((item, i) =>
      walkValue(walk, field.type, field.message, item, `${path}[${i}]`, goPath, struct),
    );
    return;
  }
  walkValue(walk, field.type, field.message, v, path, goPath, struct);
}

function walkValue(
  walk: Walk,
  type: ScalarType | 'message',
  message: string | undefined,
  v: unknown,
  path: string,
  goPath: string,
  struct: string,
): void {
  const problem = typeProblem(type, v);
  if (problem) return fail(walk, problem, struct, goPath, goType(type, message));
  if (type === 'message' && v !== null) walkMessage(walk, v as Json, messageSchema(message!)!, path, goPath);
}

/**
 * Checks a JSON object against its kind's message: names the fields the kind does not have (and, with `prune`,
 * deletes them, as decoding into the Go type drops them) and the first value of the wrong type.
 */
export function checkFields(obj: Json, message: string, options: { prune: boolean }): FieldCheck {
  const walk: Walk = { out: { unknown: [] }, prune: options.prune };
  walkMessage(walk, obj, messageSchema(message)!, '', '');
  return walk.out;
}
