// RFC 6902 JSON Patch with the Kubernetes API server's quirks. Written here rather than on top of the rfc6902
// package because its semantics get in the way at each point Kubernetes differs from, or is stricter than, the RFC:
// it cannot replace the document root, it fails `replace` of a missing object key (Kubernetes' json-patch library
// treats that as `add`), it parses array indexes leniently (parseInt accepts "1x"), it silently skips "__proto__"
// tokens (so a patch would land on the wrong location) and it keeps applying operations after one fails. Our own
// ~150 lines give exact errors that name the failing operation, all-or-nothing application on a private copy, and
// no prototype pitfalls.
import { PatchError } from './errors.ts';
import { cloneJson, describe, getOwn, hasOwn, isJsonObject, jsonEqual, setOwn } from './json.ts';

type OpName = 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
const OP_NAMES: ReadonlySet<string> = new Set<OpName>(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** One validated operation: pointers already split into unescaped reference tokens. */
interface Operation {
  readonly index: number;
  readonly op: OpName;
  readonly path: string;
  readonly tokens: readonly string[];
  readonly fromTokens: readonly string[];
  readonly value: unknown;
}

/**
 * Applies an RFC 6902 JSON patch (`application/json-patch+json`) and returns a new document; the input is never
 * mutated, and the patch applies all-or-nothing. Kubernetes specifics: `replace` of a missing object key behaves as
 * `add`, `remove` of a missing key fails, and the array index `-` appends.
 *
 * @throws {PatchError} 400 when `operations` is not an array of well-formed operations (unknown `op`, missing or
 * malformed `path`/`from`, missing `value`); 422 when an operation cannot be applied (missing path, bad array index,
 * failed `test`), with a message naming the operation's index and path.
 *
 * @example
 * applyJsonPatch({ spec: { replicas: 1 } }, [{ op: 'replace', path: '/spec/replicas', value: 3 }]);
 * // → { spec: { replicas: 3 } }
 */
export function applyJsonPatch(target: unknown, operations: unknown): unknown {
  const ops = parseOperations(operations);
  let doc = cloneJson(target);
  for (const op of ops) doc = applyOperation(doc, op);
  return doc;
}

function parseOperations(operations: unknown): Operation[] {
  if (!Array.isArray(operations)) {
    throw new PatchError(400, `a json patch must be an array of operations, got ${describe(operations)}`);
  }
  return operations.map((raw: unknown, index): Operation => {
    const bad = (why: string): PatchError => new PatchError(400, `json patch operation ${index}: ${why}`);
    if (!isJsonObject(raw)) throw bad(`an operation must be an object, got ${describe(raw)}`);
    const op = getOwn(raw, 'op');
    if (typeof op !== 'string' || !OP_NAMES.has(op)) throw bad(`unknown op ${describe(op)}`);
    const path = getOwn(raw, 'path');
    if (typeof path !== 'string') throw bad(`"path" must be a string, got ${describe(path)}`);
    const tokens = parsePointer(path);
    if (!tokens) throw bad(`"path" ${describe(path)} is not a JSON pointer`);
    let fromTokens: readonly string[] = [];
    if (op === 'move' || op === 'copy') {
      const from = getOwn(raw, 'from');
      const parsed = typeof from === 'string' ? parsePointer(from) : undefined;
      if (!parsed) throw bad(`"from" ${describe(from)} is not a JSON pointer`);
      fromTokens = parsed;
    }
    if ((op === 'add' || op === 'replace' || op === 'test') && !hasOwn(raw, 'value')) {
      throw bad(`${op} needs a "value"`);
    }
    return { index, op: op as OpName, path, tokens, fromTokens, value: getOwn(raw, 'value') };
  });
}

/** RFC 6901: "" is the whole document, otherwise "/"-separated tokens with ~1 → "/" and ~0 → "~". */
function parsePointer(pointer: string): string[] | undefined {
  if (pointer === '') return [];
  if (!pointer.startsWith('/') || /~(?![01])/.test(pointer)) return undefined;
  return pointer
    .slice(1)
    .split('/')
    .map((token) => token.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function applyOperation(doc: unknown, op: Operation): unknown {
  const fail = (why: string): PatchError =>
    new PatchError(422, `json patch operation ${op.index} (${op.op} ${op.path}) failed: ${why}`, { field: op.path });
  switch (op.op) {
    case 'add':
      return add(doc, op.tokens, cloneJson(op.value), fail);
    case 'remove':
      return remove(doc, op.tokens, fail);
    case 'replace':
      return replace(doc, op.tokens, cloneJson(op.value), fail);
    case 'test': {
      const found = lookup(doc, op.tokens);
      if (!found) throw fail('the path does not exist');
      if (!jsonEqual(found.value, op.value)) {
        throw fail(`the value is ${describe(found.value)}, not ${describe(op.value)}`);
      }
      return doc;
    }
    case 'copy':
    case 'move': {
      const found = lookup(doc, op.fromTokens);
      if (!found) throw fail(`"from" ${pointerOf(op.fromTokens)} does not exist`);
      if (op.op === 'copy') return add(doc, op.tokens, cloneJson(found.value), fail);
      if (isPrefix(op.fromTokens, op.tokens)) {
        if (op.fromTokens.length === op.tokens.length) return doc;
        throw fail(`cannot move ${pointerOf(op.fromTokens)} into its own child`);
      }
      return add(remove(doc, op.fromTokens, fail), op.tokens, found.value, fail);
    }
  }
}

type Fail = (why: string) => PatchError;

function add(doc: unknown, tokens: readonly string[], value: unknown, fail: Fail): unknown {
  if (tokens.length === 0) return value;
  const { parent, key } = parentOf(doc, tokens, fail);
  if (Array.isArray(parent)) {
    const index = key === '-' ? parent.length : arrayIndex(key);
    if (index === undefined || index > parent.length) throw fail(`${describe(key)} is not an index of the array`);
    parent.splice(index, 0, value);
  } else {
    setOwn(parent, key, value);
  }
  return doc;
}

function remove(doc: unknown, tokens: readonly string[], fail: Fail): unknown {
  if (tokens.length === 0) throw fail('cannot remove the whole document');
  const { parent, key } = parentOf(doc, tokens, fail);
  if (Array.isArray(parent)) {
    const index = arrayIndex(key);
    if (index === undefined || index >= parent.length) throw fail(`${describe(key)} is not an index of the array`);
    parent.splice(index, 1);
  } else {
    if (!hasOwn(parent, key)) throw fail(`the key ${describe(key)} does not exist`);
    delete parent[key];
  }
  return doc;
}

function replace(doc: unknown, tokens: readonly string[], value: unknown, fail: Fail): unknown {
  if (tokens.length === 0) return value;
  const { parent, key } = parentOf(doc, tokens, fail);
  if (Array.isArray(parent)) {
    const index = arrayIndex(key);
    if (index === undefined || index >= parent.length) throw fail(`${describe(key)} is not an index of the array`);
    parent[index] = value;
  } else {
    // Kubernetes' json-patch library (evanphx/json-patch v4) does not check that an object key exists before a
    // replace, so clients rely on replace-as-add; the RFC would fail here.
    setOwn(parent, key, value);
  }
  return doc;
}

/** The container holding the location `tokens` points at, which must exist and be an object or array. */
function parentOf(
  doc: unknown,
  tokens: readonly string[],
  fail: Fail,
): { parent: unknown[] | Record<string, unknown>; key: string } {
  const found = lookup(doc, tokens.slice(0, -1));
  const parent = found?.value;
  if (!Array.isArray(parent) && !isJsonObject(parent)) {
    throw fail(found ? `${pointerOf(tokens.slice(0, -1))} is not an object or array` : 'the path does not exist');
  }
  return { parent, key: tokens[tokens.length - 1] ?? '' };
}

/** The value at `tokens`, or undefined when any step is missing. */
function lookup(doc: unknown, tokens: readonly string[]): { value: unknown } | undefined {
  let current = doc;
  for (const token of tokens) {
    if (Array.isArray(current)) {
      const index = arrayIndex(token);
      if (index === undefined || index >= current.length) return undefined;
      current = current[index];
    } else if (isJsonObject(current) && hasOwn(current, token)) {
      current = current[token];
    } else {
      return undefined;
    }
  }
  return { value: current };
}

/** RFC 6901 array index: "0" or digits without a leading zero (no sign, no "-", no "1x"). */
function arrayIndex(token: string): number | undefined {
  return /^(0|[1-9][0-9]*)$/.test(token) ? Number(token) : undefined;
}

function isPrefix(prefix: readonly string[], tokens: readonly string[]): boolean {
  return prefix.length <= tokens.length && prefix.every((token, i) => token === tokens[i]);
}

function pointerOf(tokens: readonly string[]): string {
  return tokens.map((t) => `/${t.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}
