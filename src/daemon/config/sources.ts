/**
 * Where settings come from, and which one wins: defaults < file < environment < flags. Each source is a layer of
 * nested values; merging them records, for every value set, the source that set it, so that a problem can be
 * reported against the file and field, the variable or the flag the user actually wrote.
 */
import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { configFields, fieldAt, flagName, oneOfGroups, type FieldKind } from './fields.ts';

/** Who set a value. */
export type Source = { kind: 'file'; file: string } | { kind: 'env'; name: string } | { kind: 'flag'; name: string };

/** One source's values (nested like the file) and who set each leaf. */
export interface Layer {
  values: Record<string, unknown>;
  origin(path: string): Source;
}

type Obj = Record<string, unknown>;

export const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Leaf values (scalars and arrays) by dotted path; `null` (an empty YAML value) counts as unset. */
export function leaves(value: Obj, prefix = ''): Array<[string, unknown]> {
  const out: Array<[string, unknown]> = [];
  for (const [key, v] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (v === null || v === undefined) continue;
    if (isObject(v)) out.push(...leaves(v, path));
    else out.push([path, v]);
  }
  return out;
}

export function getPath(root: Obj, path: string): unknown {
  let cur: unknown = root;
  for (const key of path.split('.')) cur = isObject(cur) ? cur[key] : undefined;
  return cur;
}

/** Sets a nested value, replacing any non-object on the way; returns the replaced ancestors' paths. */
export function setPath(root: Obj, path: string, value: unknown): string[] {
  const keys = path.split('.');
  const replaced: string[] = [];
  let cur = root;
  keys.slice(0, -1).forEach((key, i) => {
    if (!isObject(cur[key])) {
      if (cur[key] !== undefined && cur[key] !== null) replaced.push(keys.slice(0, i + 1).join('.'));
      cur[key] = {};
    }
    cur = cur[key] as Obj;
  });
  cur[keys.at(-1)!] = value;
  return replaced;
}

/**
 * A string from the environment or a flag as a value of `kind`. What does not convert is passed through as given,
 * so validation reports it against its variable or flag (`--workers-pods: must be an integer ≥ 1`).
 */
export function convert(kind: FieldKind, raw: string | boolean): unknown {
  if (typeof raw === 'boolean') return raw;
  const s = raw.trim();
  switch (kind) {
    case 'int':
      return /^[+-]?\d+$/.test(s) ? Number(s) : raw;
    case 'number':
      return s !== '' && Number.isFinite(Number(s)) ? Number(s) : raw;
    case 'bool':
      return /^(true|1|yes|on)$/i.test(s) ? true : /^(false|0|no|off)$/i.test(s) ? false : raw;
    case 'list':
      return s
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '');
    case 'string':
      return s;
  }
}

/** The config file as a layer, or the problems reading it (`raven.yaml: not valid YAML: …`). */
export function fileLayer(file: string): { layer?: Layer; problems: string[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return {
      problems: [
        `${file}: cannot read the config file (${code === 'ENOENT' ? 'no such file' : (code ?? String(err))})`,
      ],
    };
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    return { problems: [`${file}: not valid YAML: ${(err as Error).message.split('\n')[0]}`] };
  }
  if (doc === null || doc === undefined) doc = {}; // an empty file: all defaults
  if (!isObject(doc)) return { problems: [`${file}: must be a mapping of settings (clusterId: …, subnets: …)`] };
  return { layer: { values: doc, origin: () => ({ kind: 'file', file }) }, problems: [] };
}

/** The table's environment variables that are set (an empty value counts as unset, as in a Pod spec). */
export function envLayer(env: NodeJS.ProcessEnv): Layer {
  const values: Obj = {};
  const names = new Map<string, string>();
  for (const field of configFields) {
    const raw = field.env !== undefined ? env[field.env] : undefined;
    if (raw === undefined || raw.trim() === '') continue;
    setPath(values, field.path, convert(field.kind, raw));
    names.set(field.path, field.env!);
  }
  return { values, origin: (path) => ({ kind: 'env', name: names.get(path) ?? path }) };
}

/** Values given as flags (see `configFromFlags`); each is reported against its flag, or `flags: <path>` otherwise. */
export function flagsLayer(values: Obj): Layer {
  return {
    values,
    origin: (path) => {
      const field = fieldAt(path);
      const name = field && flagName(field);
      if (!name) return { kind: 'flag', name: `flags: ${path}` };
      return {
        kind: 'flag',
        name: field.negatable && getPath(values, path) === false ? name.replace(/^--/, '--no-') : name,
      };
    },
  };
}

/** All layers merged, later ones winning, with the source of every value that survived. */
export function mergeLayers(layers: readonly Layer[]): { merged: Obj; origins: Map<string, Source> } {
  const merged: Obj = {};
  const origins = new Map<string, Source>();
  const forget = (path: string) => {
    for (const key of [...origins.keys()]) if (key === path || key.startsWith(`${path}.`)) origins.delete(key);
  };
  for (const layer of layers) {
    const set = leaves(layer.values);
    // A source that picks one alternative of a group overrides the lower sources' pick.
    for (const group of oneOfGroups) {
      if (!group.members.some((m) => set.some(([p]) => p === `${group.path}.${m}`))) continue;
      const target = getPath(merged, group.path);
      for (const m of group.members) {
        if (isObject(target)) delete target[m];
        forget(`${group.path}.${m}`);
      }
    }
    for (const [path, value] of set) {
      forget(path);
      for (const ancestor of setPath(merged, path, value)) origins.delete(ancestor);
      origins.set(path, layer.origin(path));
    }
  }
  return { merged, origins };
}

/** The source of the value at `path`, or of the nearest ancestor set as a whole. */
export function originOf(origins: ReadonlyMap<string, Source>, path: string): Source | undefined {
  const keys = path.split('.');
  for (let n = keys.length; n > 0; n--) {
    const found = origins.get(keys.slice(0, n).join('.'));
    if (found) return found;
  }
  return undefined;
}
