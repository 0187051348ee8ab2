// Small helpers over parsed JSON values shared by the three patch engines. Objects coming off the wire may carry an
// own "__proto__" key (JSON.parse makes it an ordinary property), so every read and write goes through hasOwn /
// setOwn: a plain `obj[key] = value` with that key would replace the object's prototype instead of storing data.
import { isPlainObject } from '../../../../src/kube/api/index.ts';

/** A parsed JSON object. */
export type JsonObject = Record<string, unknown>;

export { isPlainObject as isJsonObject };

/** True when `obj` has `key` as its own property (never an inherited one such as `constructor`). */
export function hasOwn(obj: JsonObject, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/** The own property `key` of `obj`, or undefined. */
export function getOwn(obj: JsonObject, key: string): unknown {
  return hasOwn(obj, key) ? obj[key] : undefined;
}

/** Stores `value` as an own data property, even for the key "__proto__". */
export function setOwn(obj: JsonObject, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/** A deep copy of a JSON value that shares nothing with it (frozen inputs give unfrozen copies). */
export function cloneJson<T>(value: T): T {
  return value === undefined ? value : structuredClone(value);
}

/** Deep equality of two JSON values; object key order does not matter, array order does. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a)) {
    return Array.isArray(b) && a.length === b.length && a.every((item, i) => jsonEqual(item, b[i]));
  }
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** A short rendering of a value for error messages (bounded, so a huge patch cannot bloat a Status). */
export function describe(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
