/**
 * Regenerates packages/apiserver/src/protobuf/schema/*.ts, the protobuf message tables of the built-in kinds the embedded API
 * server serves, from the message descriptors a kubectl build carries (client-go registers each API package's
 * `generated.proto`, gzipped, in the binary). Field numbers and wire types are the API's published wire contract;
 * the tables are the project's own compact form of them (see packages/apiserver/src/protobuf/schema.ts for the grammar).
 *
 *   node --import tsx scripts/proto-schema.ts /usr/lib/google-cloud-sdk/bin/kubectl.1.33
 *
 * `readDescriptors` is also what the schema test uses to check the tables against a kubectl build.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { fromBinary } from '@bufbuild/protobuf';
import {
  FieldDescriptorProto_Label as Label,
  FieldDescriptorProto_Type as Type,
  FileDescriptorProtoSchema,
  type FileDescriptorProto,
} from '@bufbuild/protobuf/wkt';

/** Every `generated.proto` descriptor in a Go binary, by proto package (`k8s.io.api.core.v1`). */
export function readDescriptors(binary: string): Map<string, FileDescriptorProto> {
  const bin = readFileSync(binary);
  const magic = Buffer.from([0x1f, 0x8b, 0x08]);
  const out = new Map<string, FileDescriptorProto>();
  for (let i = bin.indexOf(magic); i >= 0; i = bin.indexOf(magic, i + 1)) {
    let raw: Buffer;
    try {
      raw = gunzipSync(bin.subarray(i, i + 4_000_000), { finishFlush: 2 });
    } catch {
      continue;
    }
    if (!/k8s\.io\/[\w./-]*generated\.proto/.test(raw.subarray(0, 200).toString('latin1'))) continue;
    try {
      const file = fromBinary(FileDescriptorProtoSchema, raw);
      out.set(file.package, file);
    } catch {
      // Not a descriptor after all.
    }
  }
  return out;
}

/** Proto package → the short name the tables use. */
export const packages: Record<string, string> = {
  'k8s.io.apimachinery.pkg.apis.meta.v1': 'meta',
  'k8s.io.apimachinery.pkg.runtime': 'runtime',
  'k8s.io.api.core.v1': 'core',
  'k8s.io.api.apps.v1': 'apps',
  'k8s.io.api.autoscaling.v1': 'autoscaling',
  'k8s.io.api.rbac.v1': 'rbac',
  'k8s.io.api.authentication.v1': 'authentication',
  'k8s.io.api.authorization.v1': 'authorization',
  'k8s.io.api.discovery.v1': 'discovery',
  'k8s.io.api.coordination.v1': 'coordination',
  'k8s.io.api.networking.v1': 'networking',
  'k8s.io.api.events.v1': 'events',
};

/** The messages the server encodes or decodes at top level; the tables hold these and what they reach. */
export const roots: Record<string, string[]> = {
  meta: [
    'Status',
    'WatchEvent',
    'DeleteOptions',
    'APIVersions',
    'APIGroupList',
    'APIGroup',
    'APIResourceList',
    'PartialObjectMetadata',
    'PartialObjectMetadataList',
  ],
  runtime: ['Unknown'],
  core: [
    ...[
      'Namespace',
      'Pod',
      'Service',
      'Endpoints',
      'Node',
      'Event',
      'ConfigMap',
      'Secret',
      'ServiceAccount',
      'ResourceQuota',
    ].flatMap((k) => [k, `${k}List`]),
    'Binding',
  ],
  apps: ['Deployment', 'DeploymentList'],
  autoscaling: ['Scale'],
  rbac: ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'].flatMap((k) => [k, `${k}List`]),
  authentication: ['TokenRequest', 'SelfSubjectReview'],
  authorization: ['SelfSubjectAccessReview', 'SelfSubjectRulesReview'],
  discovery: ['EndpointSlice', 'EndpointSliceList'],
  coordination: ['Lease', 'LeaseList'],
  networking: ['NetworkPolicy', 'NetworkPolicyList'],
  events: ['Event', 'EventList'],
};

/** Messages with a JSON form of their own (Time is an RFC 3339 string, Quantity a string…): a scalar type each. */
const specialTypes: Record<string, string> = {
  '.k8s.io.apimachinery.pkg.apis.meta.v1.Time': 'time',
  '.k8s.io.apimachinery.pkg.apis.meta.v1.MicroTime': 'microtime',
  '.k8s.io.apimachinery.pkg.apis.meta.v1.Duration': 'duration',
  '.k8s.io.apimachinery.pkg.apis.meta.v1.FieldsV1': 'json',
  '.k8s.io.apimachinery.pkg.apis.meta.v1.Verbs': 'strings',
  '.k8s.io.apimachinery.pkg.runtime.RawExtension': 'json',
  '.k8s.io.apimachinery.pkg.api.resource.Quantity': 'quantity',
  '.k8s.io.apimachinery.pkg.util.intstr.IntOrString': 'intstr',
  '.k8s.io.api.authentication.v1.ExtraValue': 'strings',
  '.k8s.io.api.authorization.v1.ExtraValue': 'strings',
};

/**
 * Go structs embedded with `json:",inline"`: their fields are the parent's in JSON but one message on the wire. The
 * descriptors do not say which fields these are, so they are named here (message.field).
 */
const inlineFields = new Set([
  'ConfigMapEnvSource.localObjectReference',
  'ConfigMapKeySelector.localObjectReference',
  'ConfigMapProjection.localObjectReference',
  'ConfigMapVolumeSource.localObjectReference',
  'SecretEnvSource.localObjectReference',
  'SecretKeySelector.localObjectReference',
  'SecretProjection.localObjectReference',
  'EphemeralContainer.ephemeralContainerCommon',
  'Probe.handler',
  'Volume.volumeSource',
]);

/**
 * Value fields whose JSON tag has no `omitempty`, so Go prints them even when zero (`allowed: false`): marked like
 * pointers, zero kept. Only those a client reads as present are listed (the descriptors carry no JSON tags).
 */
const keptWhenZero = new Set([
  'SubjectAccessReviewStatus.allowed',
  'SubjectRulesReviewStatus.incomplete',
  'ContainerStatus.ready',
  'ContainerStatus.restartCount',
  'ContainerStatus.image',
  'ContainerStatus.imageID',
]);

/** Proto field names that are not the JSON name (the generator derived them from the Go name). */
const jsonNames: Record<string, string> = { 'BoundObjectReference.uID': 'uid' };

const scalarTypes: Partial<Record<Type, string>> = {
  [Type.DOUBLE]: 'f64',
  [Type.INT64]: 'i64',
  [Type.INT32]: 'i32',
  [Type.BOOL]: 'bool',
  [Type.STRING]: '',
  [Type.BYTES]: 'bytes',
};
const NULLABLE = 65001;

type Msg = FileDescriptorProto['messageType'][number];
type Field = Msg['field'][number];

function isValueField(f: Field): boolean {
  return (f.options?.$unknown ?? []).some((u) => u.no === NULLABLE && u.data[0] === 0);
}

function typeRef(typeName: string, from: string): string {
  const special = specialTypes[typeName];
  if (special) return special;
  const dot = typeName.lastIndexOf('.');
  const pkg = packages[typeName.slice(1, dot)];
  if (!pkg) throw new Error(`message of an unknown package: ${typeName}`);
  return pkg === from ? typeName.slice(dot + 1) : `${pkg}.${typeName.slice(dot + 1)}`;
}

function fieldToken(field: Field, msg: Msg, pkg: string): string {
  const f = { ...field, name: jsonNames[`${msg.name}.${field.name}`] ?? field.name } as Field;
  const repeated = f.label === Label.REPEATED;
  if (f.type === Type.MESSAGE) {
    const entry = msg.nestedType.find((n) => `.${n.name}` === f.typeName.slice(f.typeName.lastIndexOf('.')));
    if (entry?.options?.mapEntry) {
      const value = entry.field.find((x) => x.number === 2)!;
      const v = value.type === Type.MESSAGE ? typeRef(value.typeName, pkg) : scalarTypes[value.type];
      return `${f.name}=${f.number}:map${v ? `<${v}>` : ''}`;
    }
    const inline = inlineFields.has(`${msg.name}.${f.name}`) ? '...' : '';
    return `${inline}${f.name}=${f.number}:${typeRef(f.typeName, pkg)}${repeated ? '[]' : ''}`;
  }
  const scalar = scalarTypes[f.type];
  if (scalar === undefined) throw new Error(`unexpected proto type ${f.type} of ${msg.name}.${f.name}`);
  const pointer = !repeated && (!isValueField(f) || keptWhenZero.has(`${msg.name}.${f.name}`));
  return `${f.name}=${f.number}${scalar ? `:${scalar}` : ''}${repeated ? '[]' : ''}${pointer ? '?' : ''}`;
}

/** Message name → field tokens, for the closure of `roots` over message references. */
export function tables(files: Map<string, FileDescriptorProto>): Map<string, Map<string, string[]>> {
  const byName = new Map<string, { pkg: string; msg: Msg }>();
  for (const [protoPkg, short] of Object.entries(packages)) {
    const file = files.get(protoPkg);
    if (!file) throw new Error(`no descriptor of ${protoPkg}`);
    for (const msg of file.messageType) byName.set(`.${protoPkg}.${msg.name}`, { pkg: short, msg });
  }
  const out = new Map<string, Map<string, string[]>>(Object.keys(roots).map((p) => [p, new Map()]));
  const queue = Object.entries(roots).flatMap(([pkg, names]) =>
    names.map((n) => `.${Object.keys(packages).find((k) => packages[k] === pkg)!}.${n}`),
  );
  while (queue.length > 0) {
    const name = queue.shift()!;
    if (specialTypes[name]) continue;
    const found = byName.get(name);
    if (!found) throw new Error(`no message ${name}`);
    const table = out.get(found.pkg)!;
    if (table.has(found.msg.name)) continue;
    table.set(
      found.msg.name,
      [...found.msg.field].sort((a, b) => a.number - b.number).map((f) => fieldToken(f, found.msg, found.pkg)),
    );
    for (const f of found.msg.field) {
      if (f.type !== Type.MESSAGE) continue;
      const entry = found.msg.nestedType.find((n) => f.typeName.endsWith(`.${n.name}`));
      const target = entry?.options?.mapEntry ? entry.field.find((x) => x.number === 2)!.typeName : f.typeName;
      if (target) queue.push(target);
    }
  }
  return out;
}

function render(pkg: string, messages: Map<string, string[]>, source: string): string {
  const lines = [
    `// Generated by scripts/proto-schema.ts from the descriptors of ${source}; the grammar is in ../schema.ts.`,
    "import type { MessageTable } from '../schema.ts';",
    '',
    `export const ${pkg}: MessageTable = {`,
  ];
  for (const name of [...messages.keys()].sort()) {
    const tokens = messages.get(name)!;
    let line = '';
    const parts: string[] = [];
    for (const t of tokens) {
      if (line && line.length + t.length > 100) {
        parts.push(line);
        line = '';
      }
      line = line ? `${line} ${t}` : t;
    }
    parts.push(line);
    lines.push(
      parts.length === 1
        ? `  ${name}: '${parts[0]}',`
        : `  ${name}:\n${parts.map((p, i) => `    '${p}${i < parts.length - 1 ? ' ' : ''}'`).join(' +\n')},`,
    );
  }
  lines.push('};', '');
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const binary = process.argv[2];
  if (!binary) throw new Error('usage: proto-schema.ts <kubectl binary>');
  const out = tables(readDescriptors(binary));
  const dir = new URL('../packages/apiserver/src/protobuf/schema/', import.meta.url).pathname;
  const version = /kubectl\.?([\d.]*)$/.exec(binary)?.[1] ?? '';
  for (const [pkg, messages] of out)
    writeFileSync(`${dir}${pkg}.ts`, render(pkg, messages, `kubectl ${version}`.trim()));
  console.log([...out].map(([pkg, m]) => `${pkg}: ${m.size}`).join(', '));
}
