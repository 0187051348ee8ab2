/**
 * ConfigMaps and Secrets (core/v1): keys usable as file names (IsConfigMapKey), a 1 MiB size cap, the
 * `immutable` flag honoured on update, and the keys a typed Secret must carry.
 */
import { byteLength, validateConfigMapKey, type KubeObject } from '../../../../src/kube/api/index.ts';
import {
  forbidden,
  immutable,
  invalid,
  invalidEach,
  record,
  required,
  semanticEqual,
  tooLong,
  type FieldCause,
} from './field.ts';

/** core.MaxSecretSize: the cap on a ConfigMap's or Secret's data, in bytes. */
export const MAX_CONFIG_SIZE = 1024 * 1024;

/** Keys a Secret of a given type must have in `data` (or `stringData`). */
const REQUIRED_SECRET_KEYS: Record<string, string[]> = {
  'kubernetes.io/tls': ['tls.crt', 'tls.key'],
  'kubernetes.io/dockerconfigjson': ['.dockerconfigjson'],
  'kubernetes.io/dockercfg': ['.dockercfg'],
  'kubernetes.io/ssh-auth': ['ssh-privatekey'],
};

/** Decoded size of base64 text, without decoding it. */
function base64Size(value: string): number {
  const padding = value.endsWith('==') ? 2 : value.endsWith('=') ? 1 : 0;
  return Math.floor((value.length * 3) / 4) - padding;
}

function keyCauses(map: Record<string, unknown> | undefined, field: string): FieldCause[] {
  return Object.keys(map ?? {}).flatMap((key) => invalidEach(`${field}[${key}]`, key, validateConfigMapKey(key)));
}

/** Once stored with `immutable: true`, neither the data nor the flag may change. */
function immutableCauses(obj: KubeObject, old: KubeObject | undefined, fields: string[]): FieldCause[] {
  if (old?.immutable !== true) return [];
  const causes: FieldCause[] = [];
  if (obj.immutable !== true) causes.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const field of fields) {
    if (!semanticEqual(obj[field], old[field]))
      causes.push(forbidden(field, 'field is immutable when `immutable` is set'));
  }
  return causes;
}

/** ConfigMap create and update. */
export function validateConfigMap(obj: KubeObject, old?: KubeObject): FieldCause[] {
  const data = record(obj.data);
  const binaryData = record(obj.binaryData);
  const causes = keyCauses(data, 'data');
  let total = 0;
  for (const [key, value] of Object.entries(data ?? {})) {
    if (binaryData && Object.hasOwn(binaryData, key))
      causes.push(invalid(`data[${key}]`, key, 'duplicate of key present in binaryData'));
    total += typeof value === 'string' ? byteLength(value) : 0;
  }
  causes.push(...keyCauses(binaryData, 'binaryData'));
  for (const value of Object.values(binaryData ?? {})) total += typeof value === 'string' ? base64Size(value) : 0;
  // Upstream reports the whole object as too long, with an empty field path.
  if (total > MAX_CONFIG_SIZE) causes.push(tooLong('', MAX_CONFIG_SIZE));
  causes.push(...immutableCauses(obj, old, ['data', 'binaryData']));
  return causes;
}

/**
 * Secret create and update. `data` values are base64 (their decoded size counts); `stringData` keys follow the same
 * rules, for servers that validate before folding stringData into data.
 */
export function validateSecret(obj: KubeObject, old?: KubeObject): FieldCause[] {
  const data = record(obj.data);
  const stringData = record(obj.stringData);
  const causes = [...keyCauses(data, 'data'), ...keyCauses(stringData, 'stringData')];
  let total = 0;
  for (const value of Object.values(data ?? {})) total += typeof value === 'string' ? base64Size(value) : 0;
  for (const value of Object.values(stringData ?? {})) total += typeof value === 'string' ? byteLength(value) : 0;
  if (total > MAX_CONFIG_SIZE) causes.push(tooLong('data', MAX_CONFIG_SIZE));
  const type = typeof obj.type === 'string' ? obj.type : '';
  for (const key of REQUIRED_SECRET_KEYS[type] ?? []) {
    const present = (data && Object.hasOwn(data, key)) || (stringData && Object.hasOwn(stringData, key));
    if (!present) causes.push(required(`data[${key}]`));
  }
  if (old) causes.push(...immutable('type', obj.type ?? 'Opaque', old.type ?? 'Opaque'));
  causes.push(...immutableCauses(obj, old, ['data']));
  return causes;
}
