import { apps } from './schema/apps.ts';
import { authentication } from './schema/authentication.ts';
import { authorization } from './schema/authorization.ts';
import { autoscaling } from './schema/autoscaling.ts';
import { coordination } from './schema/coordination.ts';
import { core } from './schema/core.ts';
import { discovery } from './schema/discovery.ts';
import { events } from './schema/events.ts';
import { meta } from './schema/meta.ts';
import { networking } from './schema/networking.ts';
import { rbac } from './schema/rbac.ts';
import { runtime } from './schema/runtime.ts';

/**
 * One API package's messages: message name → its fields, as space-separated tokens `name=number[:type][[]][?]`:
 * - no type: a string; `i32`, `i64`, `bool`, `f64`, `bytes` (base64 in JSON): the scalar;
 * - `time` (RFC 3339, seconds), `microtime` (RFC 3339, microseconds), `duration` (Go duration string), `quantity`
 *   (a string), `intstr` (a number or a string), `json` (embedded JSON: RawExtension, FieldsV1), `strings` (a list of
 *   strings wrapped in a message): the messages whose JSON form is not an object;
 * - `Name` or `pkg.Name`: a message of this package or another;
 * - `map` (string → string) or `map<type>`: a map;
 * - a `...` prefix: a Go struct embedded inline, whose fields are the parent's in JSON (one message on the wire);
 * - `[]`: repeated; `?`: a scalar whose zero value is kept — a pointer, or a value field without `omitempty` (other
 *   scalars are omitted from JSON when zero, as Go's `omitempty` does for the value fields of the API types).
 * The field numbers and types are the Kubernetes API's protobuf wire contract.
 */
export type MessageTable = Readonly<Record<string, string>>;

export type ScalarType =
  | 'string'
  | 'i32'
  | 'i64'
  | 'bool'
  | 'f64'
  | 'bytes'
  | 'time'
  | 'microtime'
  | 'duration'
  | 'quantity'
  | 'intstr'
  | 'json'
  | 'strings';

/** One field of a message. `message` is set for message fields, else `type` says which scalar. */
export interface FieldSpec {
  name: string;
  number: number;
  type: ScalarType | 'message';
  /** Qualified message name (`core.PodSpec`) for message fields and for map values that are messages. */
  message?: string;
  repeated: boolean;
  /** A map: the value's type (keys are strings). */
  map?: { type: ScalarType | 'message'; message?: string };
  pointer: boolean;
  /** Embedded inline: the message's fields sit in the parent's JSON object. */
  inline: boolean;
}

export interface MessageSchema {
  name: string;
  fields: readonly FieldSpec[];
  byName: ReadonlyMap<string, FieldSpec>;
  byNumber: ReadonlyMap<number, FieldSpec>;
}

const tables: Record<string, MessageTable> = {
  meta,
  runtime,
  core,
  apps,
  autoscaling,
  rbac,
  authentication,
  authorization,
  discovery,
  coordination,
  networking,
  events,
};

const scalars = new Set<string>([
  'i32',
  'i64',
  'bool',
  'f64',
  'bytes',
  'time',
  'microtime',
  'duration',
  'quantity',
  'intstr',
  'json',
  'strings',
]);

function typeOf(text: string, pkg: string): { type: ScalarType | 'message'; message?: string } {
  if (text === '') return { type: 'string' };
  if (scalars.has(text)) return { type: text as ScalarType };
  return { type: 'message', message: text.includes('.') ? text : `${pkg}.${text}` };
}

const TOKEN = /^(\.\.\.)?(\w+)=(\d+)(?::([\w.]+)(?:<([\w.]+)>)?)?(\[\])?(\?)?$/;

function parseField(token: string, pkg: string, where: string): FieldSpec {
  const m = TOKEN.exec(token);
  if (!m) throw new Error(`protobuf schema ${where}: bad field token ${token}`);
  const [, inline, name, number, type = '', mapValue, repeated, pointer] = m;
  const field: FieldSpec = {
    name: name!,
    inline: inline !== undefined,
    number: Number(number),
    type: 'string',
    repeated: repeated !== undefined,
    pointer: pointer !== undefined,
  };
  if (type === 'map') {
    field.type = 'message';
    field.map = typeOf(mapValue ?? '', pkg);
  } else {
    Object.assign(field, typeOf(type, pkg));
  }
  return field;
}

const cache = new Map<string, MessageSchema>();

/** The schema of a message by qualified name (`core.Pod`), or undefined when the tables have no such message. */
export function messageSchema(qualified: string): MessageSchema | undefined {
  const cached = cache.get(qualified);
  if (cached) return cached;
  const dot = qualified.indexOf('.');
  const pkg = qualified.slice(0, dot);
  const text = tables[pkg]?.[qualified.slice(dot + 1)];
  if (text === undefined) return undefined;
  const fields = text.split(/\s+/).map((t) => parseField(t, pkg, qualified));
  const schema: MessageSchema = {
    name: qualified,
    fields,
    byName: new Map(fields.map((f) => [f.name, f])),
    byNumber: new Map(fields.map((f) => [f.number, f])),
  };
  cache.set(qualified, schema);
  return schema;
}

/** A message's field tokens as the table writes them (`name=1 spec=2:PodSpec …`), or undefined. */
export function messageTokens(qualified: string): string[] | undefined {
  const dot = qualified.indexOf('.');
  return tables[qualified.slice(0, dot)]?.[qualified.slice(dot + 1)]?.split(/\s+/);
}

/** Every message of every table, qualified. */
export function allMessages(): string[] {
  return Object.entries(tables).flatMap(([pkg, table]) => Object.keys(table).map((name) => `${pkg}.${name}`));
}

/** API group → the package of its messages (`meta` holds the kinds every group serves: Status, DeleteOptions…). */
const groupPackages: Record<string, string> = {
  '': 'core',
  apps: 'apps',
  autoscaling: 'autoscaling',
  'rbac.authorization.k8s.io': 'rbac',
  'authentication.k8s.io': 'authentication',
  'authorization.k8s.io': 'authorization',
  'discovery.k8s.io': 'discovery',
  'coordination.k8s.io': 'coordination',
  'networking.k8s.io': 'networking',
  'events.k8s.io': 'events',
  'meta.k8s.io': 'meta',
};

/** Served versions: an apiVersion other than these has no protobuf form here. */
const groupVersions = new Set([
  'v1',
  'apps/v1',
  'autoscaling/v1',
  'rbac.authorization.k8s.io/v1',
  'authentication.k8s.io/v1',
  'authorization.k8s.io/v1',
  'discovery.k8s.io/v1',
  'coordination.k8s.io/v1',
  'networking.k8s.io/v1',
  'events.k8s.io/v1',
  'meta.k8s.io/v1',
]);

/** The message of a kind in an apiVersion (`v1`, `Pod` → `core.Pod`), or undefined when it has no protobuf form. */
export function messageOfKind(apiVersion: string, kind: string): string | undefined {
  if (!groupVersions.has(apiVersion)) return undefined;
  const slash = apiVersion.lastIndexOf('/');
  const pkg = groupPackages[slash < 0 ? '' : apiVersion.slice(0, slash)]!;
  for (const name of [`${pkg}.${kind}`, `meta.${kind}`]) if (messageSchema(name)) return name;
  return undefined;
}
