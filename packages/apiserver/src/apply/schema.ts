// What structured-merge-diff needs to know about a kind: which objects are structs (their keys are declared fields),
// maps or atomic, and which lists are atomic, sets of scalars or associative (`x-kubernetes-list-type: map`, keyed by
// `x-kubernetes-list-map-keys`). Upstream reads this from the OpenAPI schema; we have no Go types, so built-in kinds
// start from their strategic-merge schema (patchMergeKey → an associative list on that key, a primitive merge list →
// a set) plus the few markers that differ from it (multi-key lists, atomic structs and maps), and custom resources
// compile their CRD's openAPIV3Schema. Anything not described is a granular struct with atomic lists, as untagged
// fields of the built-in types are.
import { isPlainObject } from '../../../../src/kube/api/index.ts';
import { strategicSchemaFor } from '../patch/index.ts';

/** How values at one position of a kind merge and are tracked. */
export interface TypeNode {
  /** Objects: `struct` (keys are declared fields), `map` (keys are map keys), `atomic` (one leaf). */
  readonly object: 'struct' | 'map' | 'atomic';
  /** Lists: `atomic` (one leaf), `set` (scalar items, `v:` elements), `map` (object items, `k:` elements). */
  readonly list: 'atomic' | 'set' | 'map';
  /** Key fields of an associative list. */
  readonly keys: readonly string[];
  /** Values of key fields an item may omit (a `default` in the schema, e.g. `protocol: TCP`). */
  readonly keyDefaults: Readonly<Record<string, unknown>>;
  /** Types of declared fields. */
  readonly fields: ReadonlyMap<string, TypeNode>;
  /** Type of map values and of fields not declared. */
  readonly elem: TypeNode;
  /** Type of list items. */
  readonly items: TypeNode;
  /** Keys left out of field sets (the fields the server owns, which stripMeta drops upstream). */
  readonly skip: ReadonlySet<string> | undefined;
}

interface Draft {
  object: TypeNode['object'];
  list: TypeNode['list'];
  keys: string[];
  keyDefaults: Record<string, unknown>;
  fields: Map<string, Draft>;
  elem: Draft | TypeNode | undefined;
  items: Draft | TypeNode | undefined;
  skip: ReadonlySet<string> | undefined;
}

function draft(object: TypeNode['object'] = 'struct'): Draft {
  return {
    object,
    list: 'atomic',
    keys: [],
    keyDefaults: {},
    fields: new Map(),
    elem: undefined,
    items: undefined,
    skip: undefined,
  };
}

/** Freezes a draft; `fallback` stands in for absent `elem`/`items`. */
function build(d: Draft | TypeNode, fallback: TypeNode): TypeNode {
  if (!(d.fields instanceof Map) || Object.isFrozen(d)) return d as TypeNode;
  const node = d as Draft;
  const fields = new Map<string, TypeNode>();
  for (const [name, child] of node.fields) fields.set(name, build(child, fallback));
  return Object.freeze({
    object: node.object,
    list: node.list,
    keys: Object.freeze([...node.keys]),
    keyDefaults: Object.freeze({ ...node.keyDefaults }),
    fields,
    elem: node.elem ? build(node.elem, fallback) : fallback,
    items: node.items ? build(node.items, fallback) : fallback,
    skip: node.skip,
  });
}

function selfReferencing(object: TypeNode['object']): TypeNode {
  const node = { object, list: 'atomic', keys: [], keyDefaults: {}, fields: new Map(), skip: undefined } as unknown as {
    elem: TypeNode;
    items: TypeNode;
  };
  node.elem = node as unknown as TypeNode;
  node.items = node as unknown as TypeNode;
  return Object.freeze(node) as unknown as TypeNode;
}

/** Fields of built-in kinds nobody described: granular structs, atomic lists. */
export const UNTYPED_STRUCT: TypeNode = selfReferencing('struct');

/**
 * x-kubernetes-preserve-unknown-fields / schemaless: granular maps whose keys are not declared fields, atomic lists.
 */
export const DEDUCED: TypeNode = selfReferencing('map');

/** The child type of `key` in an object of type `node`. */
export function childType(node: TypeNode, key: string): TypeNode {
  return node.fields.get(key) ?? node.elem;
}

/** True when `key` is a declared field of `node` (named fields are not members of their own, see tofieldset.go). */
export function isDeclared(node: TypeNode, key: string): boolean {
  return node.object === 'struct' || node.fields.has(key);
}

/** The fields the server owns (fieldmanager's stripMeta): never part of any manager's set. */
const STRIPPED_ROOT = new Set(['apiVersion', 'kind']);
const STRIPPED_META = new Set([
  'name',
  'namespace',
  'creationTimestamp',
  'selfLink',
  'uid',
  'clusterName',
  'generation',
  'managedFields',
  'resourceVersion',
]);

function objectMeta(): Draft {
  const meta = draft();
  meta.skip = STRIPPED_META;
  meta.fields.set('labels', draft('map'));
  meta.fields.set('annotations', draft('map'));
  const finalizers = draft();
  finalizers.list = 'set';
  meta.fields.set('finalizers', finalizers);
  const owners = draft();
  owners.list = 'map';
  owners.keys = ['uid'];
  owners.items = draft('atomic'); // OwnerReference is +structType=atomic
  meta.fields.set('ownerReferences', owners);
  return meta;
}

/** The node at `path` (`spec.containers[].ports`: `[]` steps into list items), created on the way. */
function at(root: Draft, path: string): Draft {
  let node = root;
  for (const segment of path.split('.')) {
    const items = segment.endsWith('[]');
    const name = items ? segment.slice(0, -2) : segment;
    let child = node.fields.get(name);
    if (!child) node.fields.set(name, (child = draft()));
    if (items) child = (child.items ??= draft()) as Draft;
    node = child;
  }
  return node;
}

interface Marker {
  keys?: string[];
  keyDefaults?: Record<string, unknown>;
  atomic?: true;
}

const TCP = { protocol: 'TCP' };
const CONTAINER_LISTS = ['containers', 'initContainers', 'ephemeralContainers'];

/**
 * Where the built-in types' markers differ from their strategic-merge tags (k8s.io/api): associative lists keyed by
 * several fields (`+listMapKey`, with the defaults that let items omit them) and `+structType`/`+mapType=atomic`.
 */
const MARKERS: Readonly<Record<string, Readonly<Record<string, Marker>>>> = {
  '/Pod': {
    ...Object.fromEntries(
      CONTAINER_LISTS.map((list) => [
        `spec.${list}[].ports`,
        { keys: ['containerPort', 'protocol'], keyDefaults: TCP },
      ]),
    ),
    'spec.topologySpreadConstraints': { keys: ['topologyKey', 'whenUnsatisfiable'] },
    'spec.topologySpreadConstraints[].labelSelector': { atomic: true },
    'spec.imagePullSecrets[]': { atomic: true },
    'spec.nodeSelector': { atomic: true },
  },
  '/Service': { 'spec.ports': { keys: ['port', 'protocol'], keyDefaults: TCP }, 'spec.selector': { atomic: true } },
  '/ServiceAccount': { 'secrets[]': { atomic: true } },
  '/Event': { involvedObject: { atomic: true }, related: { atomic: true } },
  'events.k8s.io/Event': { regarding: { atomic: true }, related: { atomic: true } },
  'networking.k8s.io/NetworkPolicy': { 'spec.podSelector': { atomic: true } },
  'apiextensions.k8s.io/CustomResourceDefinition': { 'status.conditions': { keys: ['type'] } },
};

const builtins = new Map<string, TypeNode>();

/** The type of a built-in kind (cached). */
export function builtinType(group: string, kind: string): TypeNode {
  const id = `${group}/${kind}`;
  const cached = builtins.get(id);
  if (cached) return cached;
  const root = draft();
  root.skip = STRIPPED_ROOT;
  root.fields.set('metadata', objectMeta());
  for (const [path, strategy] of Object.entries(strategicSchemaFor(group, kind)?.lists ?? {})) {
    if (path.startsWith('metadata.')) continue;
    const node = at(root, path);
    node.list = strategy.patchMergeKey === undefined ? 'set' : 'map';
    node.keys = strategy.patchMergeKey === undefined ? [] : [strategy.patchMergeKey];
  }
  for (const [path, marker] of Object.entries(MARKERS[id] ?? {})) {
    const node = at(root, path);
    if (marker.keys) {
      node.list = 'map';
      node.keys = marker.keys;
      node.keyDefaults = marker.keyDefaults ?? {};
    }
    if (marker.atomic) node.object = 'atomic';
  }
  const type = build(root, UNTYPED_STRUCT);
  builtins.set(id, type);
  return type;
}

const compiledCrds = new WeakMap<object, TypeNode>();

/**
 * The type of a custom resource from its CRD version's `openAPIV3Schema` (cached per schema object): `properties` are
 * declared fields, `additionalProperties` a map, `x-kubernetes-list-type`/`-list-map-keys`/`-map-type` as written
 * (lists default to atomic), `x-kubernetes-preserve-unknown-fields` or no schema → {@link DEDUCED}.
 */
const NO_SCHEMA = Object.freeze({});

export function customResourceType(openAPIV3Schema: unknown): TypeNode {
  const schema = isPlainObject(openAPIV3Schema) ? openAPIV3Schema : NO_SCHEMA;
  const cached = compiledCrds.get(schema);
  if (cached) return cached;
  const root = fromOpenApi(schema);
  root.skip = STRIPPED_ROOT;
  if (root.object === 'atomic') root.object = 'map';
  if (root.elem === undefined && root.fields.size === 0) root.elem = DEDUCED;
  root.fields.set('metadata', objectMeta());
  root.fields.set('apiVersion', draft());
  root.fields.set('kind', draft());
  const type = build(root, DEDUCED);
  compiledCrds.set(schema, type);
  return type;
}

function fromOpenApi(schema: Record<string, unknown>): Draft {
  const node = draft();
  const properties = isPlainObject(schema.properties) ? schema.properties : undefined;
  const additional = isPlainObject(schema.additionalProperties) ? schema.additionalProperties : undefined;
  if (properties) {
    for (const [name, child] of Object.entries(properties))
      node.fields.set(name, fromOpenApi(isPlainObject(child) ? child : {}));
    if (schema['x-kubernetes-preserve-unknown-fields'] === true) {
      node.object = 'map'; // declared properties plus undeclared keys of any shape
      node.elem = DEDUCED;
    }
  } else if (additional) {
    node.object = 'map';
    node.elem = fromOpenApi(additional);
  } else {
    node.object = 'map';
    node.elem = DEDUCED;
  }
  if (schema['x-kubernetes-map-type'] === 'atomic') node.object = 'atomic';
  const listType = schema['x-kubernetes-list-type'];
  if (listType === 'set' || listType === 'map') node.list = listType;
  if (isPlainObject(schema.items)) {
    const items = fromOpenApi(schema.items);
    node.items = items;
    if (listType === 'map') {
      node.keys = Array.isArray(schema['x-kubernetes-list-map-keys'])
        ? schema['x-kubernetes-list-map-keys'].filter((k): k is string => typeof k === 'string')
        : [];
      const itemProps = isPlainObject(schema.items.properties) ? schema.items.properties : {};
      for (const key of node.keys) {
        const prop = itemProps[key];
        if (isPlainObject(prop) && prop.default !== undefined) node.keyDefaults[key] = prop.default;
      }
    }
  }
  return node;
}
