import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import {
  fieldSelectorExactMatch,
  fieldSelectorPaths,
  formatFieldSelector,
  matchesFields,
  parseFieldSelector,
} from './field-selector.ts';
import { SelectorError } from './selectors.ts';

const terms = (text: string): [string, string, string][] =>
  parseFieldSelector(text).requirements.map((r) => [r.field, r.operator, r.value]);

function parseError(text: string): string {
  try {
    parseFieldSelector(text);
  } catch (err) {
    assert.ok(err instanceof SelectorError);
    assert.equal(err.code, 'SELECTOR_INVALID');
    return err.message;
  }
  return assert.fail(`expected ${JSON.stringify(text)} to fail`);
}

describe('parseFieldSelector', () => {
  it('parses =, == and != terms, sorted as strings', () => {
    assert.deepEqual(terms('status.phase!=Running,spec.nodeName==node-1,metadata.name=web'), [
      ['metadata.name', '=', 'web'],
      ['spec.nodeName', '==', 'node-1'],
      ['status.phase', '!=', 'Running'],
    ]);
  });

  it('treats empty input and empty terms as nothing', () => {
    assert.deepEqual(terms(''), []);
    assert.deepEqual(terms('a=b,,c=d,'), [
      ['a', '=', 'b'],
      ['c', '=', 'd'],
    ]);
  });

  it('accepts empty values and keeps paths literal', () => {
    assert.deepEqual(terms('spec.nodeName='), [['spec.nodeName', '=', '']]);
    assert.deepEqual(terms(' a = b'), [[' a ', '=', ' b']]);
  });

  it('unescapes backslash-escaped values, splitting only on unescaped commas', () => {
    assert.deepEqual(terms('a=b\\,c,d=e'), [
      ['a', '=', 'b,c'],
      ['d', '=', 'e'],
    ]);
    assert.deepEqual(terms('a=b\\=c'), [['a', '=', 'b=c']]);
    assert.deepEqual(terms('a=b\\\\c'), [['a', '=', 'b\\c']]);
  });

  it('splits on the first operator', () => {
    assert.deepEqual(terms('a=!b'), [['a', '=', '!b']]);
    assert.deepEqual(terms('a!=\\=b'), [['a', '!=', '=b']]);
    assert.deepEqual(terms('a==\\=b'), [['a', '==', '=b']]);
  });

  it('reports errors with upstream messages', () => {
    assert.equal(parseError('a'), "invalid selector: 'a'; can't understand 'a'");
    assert.equal(parseError('a=b,c'), "invalid selector: 'a=b,c'; can't understand 'c'");
    assert.equal(parseError('a=b=c'), 'invalid field selector: unescapedRune character in value: 61');
    assert.equal(parseError('a!==b'), 'invalid field selector: unescapedRune character in value: 61');
    assert.equal(parseError('a=b\\x'), 'invalid field selector: invalid escape sequence: \\x');
    assert.equal(parseError('a=b\\'), 'invalid field selector: invalid escape sequence: \\');
  });
});

describe('matchesFields', () => {
  const pod: Record<string, string | undefined> = {
    'metadata.name': 'web-1',
    'spec.nodeName': 'node-1',
    'status.phase': 'Running',
  };
  const get = (path: string): string | undefined => pod[path];
  const cases: [string, boolean][] = [
    ['', true],
    ['metadata.name=web-1', true],
    ['metadata.name==web-1', true],
    ['metadata.name=web-2', false],
    ['metadata.name!=web-2', true],
    ['spec.nodeName=node-1,status.phase!=Failed', true],
    ['spec.nodeName=node-1,status.phase!=Running', false],
    ['spec.schedulerName=', true],
    ['spec.schedulerName!=', false],
  ];
  for (const [selector, expected] of cases) {
    it(`${JSON.stringify(selector)} → ${expected}`, () =>
      assert.equal(matchesFields(parseFieldSelector(selector), get), expected));
  }
});

describe('fieldSelectorPaths, fieldSelectorExactMatch and formatFieldSelector', () => {
  it('lists distinct paths in order', () => {
    assert.deepEqual(fieldSelectorPaths(parseFieldSelector('b=1,a=2,a!=3')), ['a', 'b']);
    assert.deepEqual(fieldSelectorPaths(parseFieldSelector('')), []);
  });
  it('finds the value an equality requires', () => {
    const expr = parseFieldSelector('metadata.name==web,status.phase!=Failed');
    assert.equal(fieldSelectorExactMatch(expr, 'metadata.name'), 'web');
    assert.equal(fieldSelectorExactMatch(expr, 'status.phase'), undefined);
    assert.equal(fieldSelectorExactMatch(expr, 'spec.nodeName'), undefined);
  });
  it('prints the canonical form with values re-escaped', () => {
    assert.equal(formatFieldSelector(parseFieldSelector('b!=2,a==1')), 'a=1,b!=2');
    assert.equal(formatFieldSelector(parseFieldSelector('a=x\\,y\\=z\\\\')), 'a=x\\,y\\=z\\\\');
    assert.equal(formatFieldSelector(parseFieldSelector('')), '');
  });
});
