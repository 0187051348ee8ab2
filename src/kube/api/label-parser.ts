/**
 * The label selector string parser, a line-by-line port of labels.Parse (lexer, then a recursive-descent parser),
 * so odd inputs (`x in (a,,b)`, `a=`, `!a`, keywords used as values) parse — or fail — exactly as upstream.
 */
import { validateQualifiedName } from './names.ts';
import {
  SelectorError,
  everythingSelector,
  goQuote,
  labelSelectorOf,
  newLabelRequirement,
  type LabelOperator,
  type LabelRequirement,
  type LabelSelectorExpr,
} from './selectors.ts';

type Token =
  | 'end'
  | 'closePar'
  | 'comma'
  | 'doesNotExist'
  | 'doubleEquals'
  | 'equals'
  | 'greaterThan'
  | 'identifier'
  | 'in'
  | 'lessThan'
  | 'notEquals'
  | 'notIn'
  | 'openPar';

interface Item {
  tok: Token;
  lit: string;
}

// A Map, not an object literal: identifiers such as `constructor` must not find Object.prototype members.
const KEYWORDS = new Map<string, Token>([
  [')', 'closePar'],
  [',', 'comma'],
  ['!', 'doesNotExist'],
  ['==', 'doubleEquals'],
  ['=', 'equals'],
  ['>', 'greaterThan'],
  ['in', 'in'],
  ['<', 'lessThan'],
  ['!=', 'notEquals'],
  ['notin', 'notIn'],
  ['(', 'openPar'],
]);

const isWhitespace = (ch: string): boolean => ch === ' ' || ch === '\t' || ch === '\r' || ch === '\n';
const isSpecial = (ch: string): boolean => '=!(),><'.includes(ch) && ch !== '';

/** Splits the input into tokens. A NUL character ends the input, as in Go's lexer (which uses 0 as its sentinel). */
function lex(s: string): Item[] {
  let pos = 0;
  const read = (): string => (pos < s.length ? (s[pos++] ?? '') : '');
  const items: Item[] = [];
  for (;;) {
    let ch = read();
    while (isWhitespace(ch)) ch = read();
    if (ch === '' || ch === '\0') {
      items.push({ tok: 'end', lit: '' });
      return items;
    }
    let buffer = ch;
    if (isSpecial(ch)) {
      // Longest special-symbol token: "!=" beats "!", but "!(" is "!" then "(".
      let last = KEYWORDS.get(buffer);
      let lit = buffer;
      for (let next = read(); next !== '' && next !== '\0'; next = read()) {
        if (!isSpecial(next)) {
          pos--;
          break;
        }
        buffer += next;
        const tok = KEYWORDS.get(buffer);
        if (tok !== undefined) {
          last = tok;
          lit = buffer;
        } else {
          pos--;
          break;
        }
      }
      // Every single special character is itself a token, so `last` is always set.
      items.push({ tok: last ?? 'end', lit });
      continue;
    }
    for (let next = read(); next !== '' && next !== '\0'; next = read()) {
      if (isSpecial(next) || isWhitespace(next)) {
        pos--;
        break;
      }
      buffer += next;
    }
    items.push({ tok: KEYWORDS.get(buffer) ?? 'identifier', lit: buffer });
  }
}

type Context = 'keyAndOperator' | 'values';

class Parser {
  #items: Item[];
  #position = 0;

  constructor(items: Item[]) {
    this.#items = items;
  }

  /** In the values context the keywords `in`/`notin` are plain identifiers (`x in (in)` is legal). */
  #item(index: number, context: Context): Item {
    const item = this.#items[index] ?? { tok: 'end', lit: '' };
    if (context === 'values' && (item.tok === 'in' || item.tok === 'notIn'))
      return { tok: 'identifier', lit: item.lit };
    return item;
  }

  lookahead(context: Context): Item {
    return this.#item(this.#position, context);
  }

  consume(context: Context): Item {
    return this.#item(this.#position++, context);
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    for (;;) {
      const { tok, lit } = this.lookahead('values');
      if (tok === 'end') return reqs;
      if (tok !== 'identifier' && tok !== 'doesNotExist') {
        throw new SelectorError(`found '${lit}', expected: !, identifier, or 'end of string'`);
      }
      try {
        reqs.push(this.parseRequirement());
      } catch (err) {
        if (err instanceof SelectorError) throw new SelectorError(`unable to parse requirement: ${err.message}`);
        throw err;
      }
      const after = this.consume('values');
      if (after.tok === 'end') return reqs;
      if (after.tok !== 'comma') throw new SelectorError(`found '${after.lit}', expected: ',' or 'end of string'`);
      const next = this.lookahead('values');
      if (next.tok !== 'identifier' && next.tok !== 'doesNotExist') {
        throw new SelectorError(`found '${next.lit}', expected: identifier after ','`);
      }
    }
  }

  parseRequirement(): LabelRequirement {
    const { key, operator } = this.parseKeyAndInferOperator();
    if (operator === 'exists' || operator === '!') return newLabelRequirement(key, operator, []);
    const op = this.parseOperator();
    const values = op === 'in' || op === 'notin' ? this.parseValues() : this.parseExactValue();
    // sets.String.List(): unique and sorted.
    return newLabelRequirement(key, op, [...values].sort());
  }

  parseKeyAndInferOperator(): { key: string; operator: LabelOperator | undefined } {
    let operator: LabelOperator | undefined;
    let item = this.consume('values');
    if (item.tok === 'doesNotExist') {
      operator = '!';
      item = this.consume('values');
    }
    if (item.tok !== 'identifier') throw new SelectorError(`found '${item.lit}', expected: identifier`);
    const keyErrs = validateQualifiedName(item.lit);
    // Upstream validates with a nil field path, which prints as "<nil>".
    if (keyErrs.length > 0)
      throw new SelectorError(`<nil>: Invalid value: ${goQuote(item.lit)}: ${keyErrs.join('; ')}`);
    const next = this.lookahead('values').tok;
    if ((next === 'end' || next === 'comma') && operator !== '!') operator = 'exists';
    return { key: item.lit, operator };
  }

  parseOperator(): LabelOperator {
    const { tok, lit } = this.consume('keyAndOperator');
    const op = OPERATORS[tok];
    if (op === undefined) throw new SelectorError(`found '${lit}', expected: in, notin, =, ==, !=, gt, lt`);
    return op;
  }

  parseValues(): Set<string> {
    const open = this.consume('values');
    if (open.tok !== 'openPar') throw new SelectorError(`found '${open.lit}' expected: '('`);
    const { tok, lit } = this.lookahead('values');
    if (tok === 'closePar') {
      this.consume('values');
      return new Set(['']);
    }
    if (tok !== 'identifier' && tok !== 'comma')
      throw new SelectorError(`found '${lit}', expected: ',', ')' or identifier`);
    const values = this.parseIdentifiersList();
    // parseIdentifiersList returns only in front of ')', so this always succeeds; kept for parity with upstream.
    if (this.consume('values').tok !== 'closePar') throw new SelectorError(`found '${lit}', expected: ')'`);
    return values;
  }

  /** A comma-separated list of possibly empty values: `(a,,b)` is {a, "", b}. */
  parseIdentifiersList(): Set<string> {
    const values = new Set<string>();
    for (;;) {
      const { tok, lit } = this.consume('values');
      if (tok === 'identifier') {
        values.add(lit);
        const next = this.lookahead('values');
        if (next.tok === 'comma') continue;
        if (next.tok === 'closePar') return values;
        throw new SelectorError(`found '${next.lit}', expected: ',' or ')'`);
      }
      if (tok !== 'comma') throw new SelectorError(`found '${lit}', expected: ',', or identifier`);
      if (values.size === 0) values.add(''); // "(,"
      const next = this.lookahead('values').tok;
      if (next === 'closePar') {
        values.add(''); // ",)"
        return values;
      }
      if (next === 'comma') values.add(''); // ",,"
    }
  }

  parseExactValue(): Set<string> {
    const ahead = this.lookahead('values').tok;
    if (ahead === 'end' || ahead === 'comma') return new Set(['']); // "a=" means a is ""
    const { tok, lit } = this.consume('values');
    if (tok === 'identifier') return new Set([lit]);
    throw new SelectorError(`found '${lit}', expected: identifier`);
  }
}

const OPERATORS: Partial<Record<Token, LabelOperator>> = {
  in: 'in',
  equals: '=',
  doubleEquals: '==',
  greaterThan: 'gt',
  lessThan: 'lt',
  notIn: 'notin',
  notEquals: '!=',
};

/**
 * Parses a `labelSelector` query value (labels.Parse): `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`,
 * `!k`, `k>1`, `k<1`, comma-separated (AND), whitespace-tolerant. The empty string matches everything.
 * @throws SelectorError with upstream's message, e.g. `unable to parse requirement: found '', expected: in, notin, =,
 * ==, !=, gt, lt`.
 * @example matchesLabels(parseLabelSelector('env in (prod,staging),!canary'), { env: 'prod' }) // true
 */
export function parseLabelSelector(text: string): LabelSelectorExpr {
  const reqs = new Parser(lex(text)).parse();
  return reqs.length === 0 ? everythingSelector : labelSelectorOf(reqs);
}
