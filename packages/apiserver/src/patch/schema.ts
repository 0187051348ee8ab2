// The strategic-merge schema: which lists merge, and by which key. Upstream derives this from Go struct tags
// (patchStrategy/patchMergeKey) or the OpenAPI extensions x-kubernetes-patch-strategy/-merge-key; we have neither, so
// a schema is plain data (field paths → strategy) compiled once into a tree the merge walks alongside the object.
import { RavenError } from '../../../../src/core/index.ts';

/** How one list field merges, as its Go type's `patchStrategy:"merge"` (and `patchMergeKey`) tag says. */
export interface ListStrategy {
  readonly patchStrategy: 'merge';
  /** Objects merge element by element on this key; without it the list holds primitives and merges as a set. */
  readonly patchMergeKey?: string;
}

/**
 * Which lists of a kind merge under a strategic merge patch. Keys are field paths from the object's root, separated
 * by `.`, where `[]` after a list field steps into its elements: `spec.containers[].env`. Lists not named here are
 * replaced wholesale and maps always merge, as they do upstream for fields without a patch strategy.
 *
 * @example
 * const schema: StrategicSchema = {
 *   lists: { 'spec.containers': { patchStrategy: 'merge', patchMergeKey: 'name' },
 *            'spec.containers[].env': { patchStrategy: 'merge', patchMergeKey: 'name' } },
 * };
 */
export interface StrategicSchema {
  readonly lists: Readonly<Record<string, ListStrategy>>;
}

/** One field of the compiled schema: its list strategy (if it is a merging list) and the fields below it. */
export interface SchemaNode {
  readonly list: ListStrategy | undefined;
  readonly children: ReadonlyMap<string, SchemaNode>;
}

interface MutableNode {
  list: ListStrategy | undefined;
  children: Map<string, MutableNode>;
}

const compiled = new WeakMap<StrategicSchema, SchemaNode>();

/** The tree form of `schema` (cached per schema object, so the built-in table compiles once). */
export function compileSchema(schema: StrategicSchema): SchemaNode {
  const cached = compiled.get(schema);
  if (cached) return cached;
  const root: MutableNode = { list: undefined, children: new Map() };
  for (const [path, strategy] of Object.entries(schema.lists)) {
    let node = root;
    for (const segment of path.split('.')) {
      const name = segment.endsWith('[]') ? segment.slice(0, -2) : segment;
      if (name === '') {
        throw new RavenError('SCHEMA_INVALID', `strategic schema path ${JSON.stringify(path)} has an empty field`);
      }
      let child = node.children.get(name);
      if (!child) {
        child = { list: undefined, children: new Map() };
        node.children.set(name, child);
      }
      node = child;
    }
    node.list = strategy;
  }
  compiled.set(schema, root);
  return root;
}

/** The schema of field `key` below `node`; undefined means "no merging lists down there". */
export function childOf(node: SchemaNode | undefined, key: string): SchemaNode | undefined {
  return node?.children.get(key);
}
