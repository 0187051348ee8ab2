/**
 * Label and field selectors with the grammar, matching and error messages of k8s.io/apimachinery/pkg/labels and
 * pkg/fields, so `?labelSelector=` / `?fieldSelector=` behave (and fail) as on a real API server.
 */
import { RavenError } from '../../core/index.ts';
import { validateLabelValue, validateQualifiedName } from './names.ts';
import type { LabelSelector } from './meta.ts';

/** A bad selector string or `metav1.LabelSelector`; the message is upstream's, fit for a 400 Status. */
export class SelectorError extends RavenError {
  constructor(message: string) {
    super('SELECTOR_INVALID', message);
  }
}

/** selection.Operator values, spelled as upstream spells them (`!` is DoesNotExist, `gt`/`lt` are `>`/`<`). */
export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

/** One requirement; `values` is sorted and deduplicated when parsed from a string. */
export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  readonly values: readonly string[];
}

/**
 * A parsed label selector: the AND of `requirements`, sorted by key. `matchesNothing` marks labels.Nothing() (what a
 * null `metav1.LabelSelector` means); with no requirements and `matchesNothing: false` it matches everything.
 */
export interface LabelSelectorExpr {
  readonly matchesNothing: boolean;
  readonly requirements: readonly LabelRequirement[];
}

/** Matches every object (labels.Everything(): an empty string or `{}` selector). */
export const everythingSelector: LabelSelectorExpr = Object.freeze({ matchesNothing: false, requirements: [] });
/** Matches no object (labels.Nothing(): a null `metav1.LabelSelector`). */
export const nothingSelector: LabelSelectorExpr = Object.freeze({ matchesNothing: true, requirements: [] });

/** True when the selector does not restrict anything (labels.Selector.Empty()). */
export function isEverything(expr: LabelSelectorExpr): boolean {
  return !expr.matchesNothing && expr.requirements.length === 0;
}

// ---------------------------------------------------------------------------------------------------------------
// field.Error rendering, the few bits selectors need (the validation package has the full set).

/** Go's `%q` of a string: what upstream prints around bad values. */
export function goQuote(value: string): string {
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0) ?? 0;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\r') out += '\\r';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Go's `%#v` of a `[]string` (`nil` for an absent slice), as printed in field errors about value lists. */
export function goStringSlice(values: readonly string[] | null): string {
  return values === null ? '[]string(nil)' : `[]string{${values.map(goQuote).join(', ')}}`;
}

/** utilerrors.Aggregate's message: one error as is, several as `[a, b]`, duplicates dropped. */
function aggregate(messages: string[]): string | undefined {
  const unique = [...new Set(messages)];
  if (unique.length <= 1) return unique[0];
  return `[${unique.join(', ')}]`;
}

// ---------------------------------------------------------------------------------------------------------------
// Requirements (labels.NewRequirement) and matching.

/**
 * labels.NewRequirement: one validated requirement. `values` null stands for Go's nil slice (it shows in messages).
 * @throws SelectorError with upstream's aggregated field errors, e.g.
 *   `values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty`.
 */
export function newLabelRequirement(
  key: string,
  operator: LabelOperator,
  values: readonly string[] | null,
): LabelRequirement {
  const errs: string[] = [];
  const keyErrs = validateQualifiedName(key);
  if (keyErrs.length > 0) errs.push(`key: Invalid value: ${goQuote(key)}: ${keyErrs.join('; ')}`);
  const vals = values ?? [];
  const shown = goStringSlice(values);
  if ((operator === 'in' || operator === 'notin') && vals.length === 0) {
    errs.push(`values: Invalid value: ${shown}: for 'in', 'notin' operators, values set can't be empty`);
  } else if ((operator === '=' || operator === '==' || operator === '!=') && vals.length !== 1) {
    errs.push(`values: Invalid value: ${shown}: exact-match compatibility requires one single value`);
  } else if ((operator === 'exists' || operator === '!') && vals.length !== 0) {
    errs.push(`values: Invalid value: ${shown}: values set must be empty for exists and does not exist`);
  } else if (operator === 'gt' || operator === 'lt') {
    if (vals.length !== 1)
      errs.push(`values: Invalid value: ${shown}: for 'Gt', 'Lt' operators, exactly one value is required`);
    vals.forEach((v, i) => {
      if (parseInt64(v) === undefined) {
        errs.push(`values[${i}]: Invalid value: ${goQuote(v)}: for 'Gt', 'Lt' operators, the value must be an integer`);
      }
    });
  }
  vals.forEach((v, i) => {
    const valueErrs = validateLabelValue(v);
    if (valueErrs.length > 0) errs.push(`values[${i}][${key}]: Invalid value: ${goQuote(v)}: ${valueErrs.join('; ')}`);
  });
  const message = aggregate(errs);
  if (message !== undefined) throw new SelectorError(message);
  return Object.freeze({ key, operator, values: Object.freeze([...vals]) });
}

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** strconv.ParseInt(v, 10, 64), or undefined when Go would fail. */
function parseInt64(value: string): bigint | undefined {
  if (!/^[+-]?\d+$/.test(value)) return undefined;
  const n = BigInt(value);
  return n < INT64_MIN || n > INT64_MAX ? undefined : n;
}

function requirementMatches(req: LabelRequirement, labels: Record<string, string>): boolean {
  const has = Object.hasOwn(labels, req.key);
  const value = has ? labels[req.key] : undefined;
  switch (req.operator) {
    case 'in':
    case '=':
    case '==':
      return value !== undefined && req.values.includes(value);
    case 'notin':
    case '!=':
      return value === undefined || !req.values.includes(value);
    case 'exists':
      return has;
    case '!':
      return !has;
    case 'gt':
    case 'lt': {
      const actual = value === undefined ? undefined : parseInt64(value);
      const wanted = req.values.length === 1 ? parseInt64(req.values[0] ?? '') : undefined;
      if (actual === undefined || wanted === undefined) return false;
      return req.operator === 'gt' ? actual > wanted : actual < wanted;
    }
  }
}

/**
 * True when `labels` (absent = no labels) satisfy every requirement.
 * @example matchesLabels(parseLabelSelector('app=web,tier!=db'), { app: 'web' }) // true
 */
export function matchesLabels(expr: LabelSelectorExpr, labels: Record<string, string> | undefined): boolean {
  if (expr.matchesNothing) return false;
  const set = labels ?? {};
  return expr.requirements.every((r) => requirementMatches(r, set));
}

const OPERATOR_TEXT: Record<LabelOperator, string> = {
  '=': '=',
  '==': '==',
  '!=': '!=',
  in: ' in ',
  notin: ' notin ',
  gt: '>',
  lt: '<',
  exists: '',
  '!': '',
};

/**
 * The canonical string (labels.Selector.String()): requirements by key, set values sorted. Both `everythingSelector`
 * and `nothingSelector` print as `""`, as upstream.
 * @example formatLabelSelector(parseLabelSelector('b in (y,x), a')) // 'a,b in (x,y)'
 */
export function formatLabelSelector(expr: LabelSelectorExpr): string {
  return expr.requirements
    .map((r) => {
      if (r.operator === '!') return `!${r.key}`;
      if (r.operator === 'exists') return r.key;
      const values = [...r.values].sort().join(',');
      const wrapped = r.operator === 'in' || r.operator === 'notin' ? `(${values})` : values;
      return `${r.key}${OPERATOR_TEXT[r.operator]}${wrapped}`;
    })
    .join(',');
}

/** A selector from requirements (the AND of them), sorted by key as labels.Selector.Add does. */
export function labelSelectorOf(reqs: readonly LabelRequirement[]): LabelSelectorExpr {
  const requirements = [...reqs].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return Object.freeze({ matchesNothing: false, requirements: Object.freeze(requirements) });
}

/** metav1.LabelSelectorOperator → selection.Operator (a Map, so `constructor` and friends are not operators). */
const LABEL_SELECTOR_OPERATORS = new Map<unknown, LabelOperator>([
  ['In', 'in'],
  ['NotIn', 'notin'],
  ['Exists', 'exists'],
  ['DoesNotExist', '!'],
]);

/**
 * metav1.LabelSelectorAsSelector: `null`/`undefined` matches nothing, `{}` matches everything, otherwise matchLabels
 * and matchExpressions ANDed. In/NotIn need values; Exists/DoesNotExist must have none.
 * @throws SelectorError with upstream's message (e.g. `"Foo" is not a valid label selector operator`).
 */
export function selectorFromLabelSelector(sel: LabelSelector | null | undefined): LabelSelectorExpr {
  if (sel === null || sel === undefined) return nothingSelector;
  const matchLabels = sel.matchLabels ?? {};
  const matchExpressions = sel.matchExpressions ?? [];
  if (Object.keys(matchLabels).length + matchExpressions.length === 0) return everythingSelector;
  const reqs: LabelRequirement[] = [];
  // Go ranges over the map in random order; sorting makes the first reported error deterministic.
  for (const key of Object.keys(matchLabels).sort()) reqs.push(newLabelRequirement(key, '=', [matchLabels[key] ?? '']));
  for (const expr of matchExpressions) {
    const op = LABEL_SELECTOR_OPERATORS.get(expr.operator);
    if (op === undefined)
      throw new SelectorError(`${goQuote(String(expr.operator))} is not a valid label selector operator`);
    const values = expr.values && expr.values.length > 0 ? [...expr.values] : null;
    reqs.push(newLabelRequirement(expr.key, op, values));
  }
  return labelSelectorOf(reqs);
}

/**
 * labels.SelectorFromSet, for Service-style `spec.selector` maps: every key must equal its value. An absent or empty
 * map matches everything (callers decide what a selector-less Service means). Not validated, as upstream.
 */
export function selectorFromMap(map: Record<string, string> | null | undefined): LabelSelectorExpr {
  const entries = Object.entries(map ?? {});
  return labelSelectorOf(
    entries.map(([key, value]) => Object.freeze({ key, operator: '=' as const, values: Object.freeze([value]) })),
  );
}
