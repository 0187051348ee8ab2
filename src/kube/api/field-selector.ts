/**
 * Field selectors (k8s.io/apimachinery/pkg/fields): `path=value`, `path==value`, `path!=value`, comma-separated (AND).
 * Values may escape `\`, `,` and `=` with a backslash; paths are taken literally (no trimming, no escaping).
 */
import { SelectorError } from './selectors.ts';

/** One term. `=` and `==` mean the same; `==` is kept only so the parsed form mirrors the input. */
export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '==' | '!=';
  readonly value: string;
}

/** The AND of `requirements`; none means everything matches. */
export interface FieldSelectorExpr {
  readonly requirements: readonly FieldRequirement[];
}

/** Splits on commas not escaped by a backslash; escapes stay in the terms (fields.splitTerms). */
function splitTerms(selector: string): string[] {
  if (selector === '') return [];
  const terms: string[] = [];
  let start = 0;
  let inSlash = false;
  for (let i = 0; i < selector.length; i++) {
    const c = selector[i];
    if (inSlash) inSlash = false;
    else if (c === '\\') inSlash = true;
    else if (c === ',') {
      terms.push(selector.slice(start, i));
      start = i + 1;
    }
  }
  terms.push(selector.slice(start));
  return terms;
}

const TERM_OPERATORS = ['!=', '==', '='] as const;

/** The first operator occurrence splits the term; `==` is tried before `=` so it never leaves a leading `=`. */
function splitTerm(term: string): [string, FieldRequirement['operator'], string] | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const op of TERM_OPERATORS) {
      if (term.startsWith(op, i)) return [term.slice(0, i), op, term.slice(i + op.length)];
    }
  }
  return undefined;
}

/** fields.UnescapeValue, with its error messages (the unescaped rune is printed as a number, as Go's `%v` does). */
function unescapeValue(value: string): string {
  if (!/[\\,=]/.test(value)) return value;
  let out = '';
  let inSlash = false;
  for (const c of value) {
    if (inSlash) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw new SelectorError(`invalid field selector: invalid escape sequence: \\${c}`);
      }
      out += c;
      inSlash = false;
    } else if (c === '\\') {
      inSlash = true;
    } else if (c === ',' || c === '=') {
      throw new SelectorError(`invalid field selector: unescapedRune character in value: ${c.codePointAt(0) ?? 0}`);
    } else {
      out += c;
    }
  }
  if (inSlash) throw new SelectorError('invalid field selector: invalid escape sequence: \\');
  return out;
}

/** fields.EscapeValue: the inverse of unescapeValue. */
function escapeValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

/**
 * Parses a `fieldSelector` query value (fields.ParseSelector). Terms are sorted as strings first, as upstream does.
 * The empty string matches everything. Which paths a resource supports is the caller's business
 * (see {@link fieldSelectorPaths}).
 * @throws SelectorError e.g. `invalid selector: 'status.phase'; can't understand 'status.phase'`.
 * @example parseFieldSelector('spec.nodeName=node-1,status.phase!=Failed')
 */
export function parseFieldSelector(text: string): FieldSelectorExpr {
  const requirements: FieldRequirement[] = [];
  for (const part of splitTerms(text).sort()) {
    if (part === '') continue;
    const split = splitTerm(part);
    if (split === undefined) throw new SelectorError(`invalid selector: '${text}'; can't understand '${part}'`);
    const [field, operator, raw] = split;
    requirements.push(Object.freeze({ field, operator, value: unescapeValue(raw) }));
  }
  return Object.freeze({ requirements: Object.freeze(requirements) });
}

/**
 * True when every term holds. `fields(path)` returns the object's value at a selectable path; `undefined` counts as
 * the empty string (fields.Set.Get), so `spec.nodeName=` selects unscheduled pods.
 * @example matchesFields(parseFieldSelector('metadata.name=a'), (p) => ({ 'metadata.name': 'a' })[p]) // true
 */
export function matchesFields(expr: FieldSelectorExpr, fields: (path: string) => string | undefined): boolean {
  return expr.requirements.every((r) => {
    const actual = fields(r.field) ?? '';
    return r.operator === '!=' ? actual !== r.value : actual === r.value;
  });
}

/** The distinct paths a selector uses, in order, so the server can reject unsupported ones with a 400. */
export function fieldSelectorPaths(expr: FieldSelectorExpr): string[] {
  return [...new Set(expr.requirements.map((r) => r.field))];
}

/**
 * The value a selector requires `field` to equal (`=`/`==`), if any: lets the server turn `metadata.name=x` into a get.
 */
export function fieldSelectorExactMatch(expr: FieldSelectorExpr, field: string): string | undefined {
  return expr.requirements.find((r) => r.field === field && r.operator !== '!=')?.value;
}

/** The canonical string (fields.Selector.String()): `=` for both equalities, values re-escaped. */
export function formatFieldSelector(expr: FieldSelectorExpr): string {
  return expr.requirements.map((r) => `${r.field}${r.operator === '!=' ? '!=' : '='}${escapeValue(r.value)}`).join(',');
}
