import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { parseLabelSelector } from './label-parser.ts';
import {
  SelectorError,
  everythingSelector,
  formatLabelSelector,
  goQuote,
  isEverything,
  matchesLabels,
  newLabelRequirement,
  nothingSelector,
  selectorFromLabelSelector,
  selectorFromMap,
} from './selectors.ts';

const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

function parseError(text: string): string {
  try {
    parseLabelSelector(text);
  } catch (err) {
    assert.ok(err instanceof SelectorError);
    assert.equal(err.code, 'SELECTOR_INVALID');
    return err.message;
  }
  assert.fail(`expected ${JSON.stringify(text)} to fail`);
}

describe('parseLabelSelector', () => {
  it('parses every operator into sorted requirements', () => {
    const expr = parseLabelSelector('z=c, y==b,x!=a, w in (b,a), v notin (q), u, !t, s>5, r<10');
    assert.equal(expr.matchesNothing, false);
    assert.deepEqual(
      expr.requirements.map((r) => [r.key, r.operator, [...r.values]]),
      [
        ['r', 'lt', ['10']],
        ['s', 'gt', ['5']],
        ['t', '!', []],
        ['u', 'exists', []],
        ['v', 'notin', ['q']],
        ['w', 'in', ['a', 'b']],
        ['x', '!=', ['a']],
        ['y', '==', ['b']],
        ['z', '=', ['c']],
      ],
    );
    assert.equal(formatLabelSelector(expr), 'r<10,s>5,!t,u,v notin (q),w in (a,b),x!=a,y==b,z=c');
  });

  it('treats the empty string (and blanks) as everything', () => {
    assert.equal(parseLabelSelector(''), everythingSelector);
    assert.equal(parseLabelSelector('  \t\n'), everythingSelector);
    assert.ok(isEverything(parseLabelSelector('')));
  });

  it('tolerates whitespace everywhere', () => {
    const expr = parseLabelSelector('  a  =  b  ,\tc  notin  ( x , y )\n');
    assert.equal(formatLabelSelector(expr), 'a=b,c notin (x,y)');
  });

  it('accepts empty values the way upstream does', () => {
    assert.equal(formatLabelSelector(parseLabelSelector('x=,z= ')), 'x=,z=');
    const expr = parseLabelSelector('x in (foo,,baz),y,z notin ()');
    assert.deepEqual(expr.requirements[0]?.values, ['', 'baz', 'foo']);
    assert.equal(formatLabelSelector(expr), 'x in (,baz,foo),y,z notin ()');
    assert.deepEqual(parseLabelSelector('x in (a,,)').requirements[0]?.values, ['', 'a']);
    assert.deepEqual(parseLabelSelector('x in (,a)').requirements[0]?.values, ['', 'a']);
  });

  it('reads keywords as values and keys where the grammar allows', () => {
    assert.deepEqual(parseLabelSelector('x in (in,notin)').requirements[0]?.values, ['in', 'notin']);
    assert.equal(formatLabelSelector(parseLabelSelector('in in (in)')), 'in in (in)');
    assert.equal(formatLabelSelector(parseLabelSelector('a=notin')), 'a=notin');
  });

  it('accepts prefixed keys', () => {
    const expr = parseLabelSelector('app.kubernetes.io/name=web,!kubernetes.io/service-name');
    assert.equal(formatLabelSelector(expr), 'app.kubernetes.io/name=web,!kubernetes.io/service-name');
  });

  it('deduplicates set values', () => {
    assert.deepEqual(parseLabelSelector('a in (x,y,x)').requirements[0]?.values, ['x', 'y']);
  });

  it('reports syntax errors with upstream messages', () => {
    assert.equal(parseError(','), "found ',', expected: !, identifier, or 'end of string'");
    assert.equal(parseError('a,'), "found '', expected: identifier after ','");
    assert.equal(parseError('a b'), "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt");
    assert.equal(parseError('a!b'), "unable to parse requirement: found '!', expected: in, notin, =, ==, !=, gt, lt");
    // `a||y` is one identifier, so the bad value is reported before the stray '='.
    assert.equal(
      parseError('x=a||y=b'),
      `unable to parse requirement: values[0][x]: Invalid value: "a||y": ${VALUE_MSG}`,
    );
    assert.equal(parseError('x==a==b'), "found '==', expected: ',' or 'end of string'");
    assert.equal(parseError('!a=b'), "found '=', expected: ',' or 'end of string'");
    assert.equal(parseError('x in a'), "unable to parse requirement: found 'a' expected: '('");
    assert.equal(parseError('x notin'), "unable to parse requirement: found '' expected: '('");
    assert.equal(parseError('x in (a'), "unable to parse requirement: found '', expected: ',' or ')'");
    assert.equal(parseError('x in (a b)'), "unable to parse requirement: found 'b', expected: ',' or ')'");
    assert.equal(parseError('x in (=)'), "unable to parse requirement: found '=', expected: ',', ')' or identifier");
    assert.equal(parseError('x in (a,=)'), "unable to parse requirement: found '=', expected: ',', or identifier");
    assert.equal(parseError('x=('), "unable to parse requirement: found '(', expected: identifier");
    assert.equal(parseError('!'), "unable to parse requirement: found '', expected: identifier");
    assert.equal(parseError('=a'), "found '=', expected: !, identifier, or 'end of string'");
  });

  it('reports invalid keys and values as field errors', () => {
    assert.equal(parseError('-a=b'), `unable to parse requirement: <nil>: Invalid value: "-a": ${NAME_PART_MSG}`);
    assert.equal(parseError('a=-b'), `unable to parse requirement: values[0][a]: Invalid value: "-b": ${VALUE_MSG}`);
    assert.equal(
      parseError('a in (-x,-y)'),
      `unable to parse requirement: [values[0][a]: Invalid value: "-x": ${VALUE_MSG}, values[1][a]: Invalid value: "-y": ${VALUE_MSG}]`,
    );
    assert.equal(
      parseError(`a=${'v'.repeat(64)}`),
      `unable to parse requirement: values[0][a]: Invalid value: "${'v'.repeat(64)}": must be no more than 63 characters`,
    );
    assert.equal(
      parseError('a>b'),
      `unable to parse requirement: values[0]: Invalid value: "b": for 'Gt', 'Lt' operators, the value must be an integer`,
    );
  });
});

describe('matchesLabels', () => {
  const labels = { app: 'web', tier: 'front', replicas: '3' };
  const cases: [selector: string, expected: boolean][] = [
    ['', true],
    ['app=web', true],
    ['app==web', true],
    ['app=db', false],
    ['app!=db', true],
    ['app!=web', false],
    ['missing!=x', true],
    ['app in (web,db)', true],
    ['app in (db)', false],
    ['missing in (x)', false],
    ['app notin (db)', true],
    ['app notin (web)', false],
    ['missing notin (x)', true],
    ['app', true],
    ['missing', false],
    ['!missing', true],
    ['!app', false],
    ['replicas>2', true],
    ['replicas>3', false],
    ['replicas<4', true],
    ['app>1', false],
    ['missing<1', false],
    ['app=web,tier=front', true],
    ['app=web,tier=back', false],
    ['app=', false],
    ['missing=', false],
  ];
  for (const [selector, expected] of cases) {
    it(`${JSON.stringify(selector)} → ${expected}`, () => {
      assert.equal(matchesLabels(parseLabelSelector(selector), labels), expected);
    });
  }

  it('treats absent labels as none', () => {
    assert.equal(matchesLabels(parseLabelSelector('!a'), undefined), true);
    assert.equal(matchesLabels(parseLabelSelector('a'), undefined), false);
    assert.equal(matchesLabels(everythingSelector, undefined), true);
  });

  it('matches an empty value only when the label is present and empty', () => {
    assert.equal(matchesLabels(parseLabelSelector('a='), { a: '' }), true);
    assert.equal(matchesLabels(parseLabelSelector('a in ()'), { a: '' }), true);
  });

  it('never looks at inherited properties', () => {
    assert.equal(matchesLabels(parseLabelSelector('!constructor,!toString'), {}), true);
    assert.equal(matchesLabels(parseLabelSelector('constructor'), {}), false);
  });

  it('nothingSelector matches nothing', () => {
    assert.equal(matchesLabels(nothingSelector, {}), false);
    assert.equal(matchesLabels(nothingSelector, undefined), false);
    assert.equal(formatLabelSelector(nothingSelector), '');
  });
});

describe('selectorFromLabelSelector', () => {
  it('distinguishes null (nothing) from empty (everything)', () => {
    assert.equal(selectorFromLabelSelector(null), nothingSelector);
    assert.equal(selectorFromLabelSelector(undefined), nothingSelector);
    assert.equal(selectorFromLabelSelector({}), everythingSelector);
    assert.equal(selectorFromLabelSelector({ matchLabels: {}, matchExpressions: [] }), everythingSelector);
  });

  it('ANDs matchLabels and matchExpressions', () => {
    const expr = selectorFromLabelSelector({
      matchLabels: { tier: 'front', app: 'web' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod', 'staging'] },
        { key: 'canary', operator: 'DoesNotExist' },
        { key: 'zone', operator: 'NotIn', values: ['b'] },
        { key: 'owner', operator: 'Exists', values: [] },
      ],
    });
    assert.equal(formatLabelSelector(expr), 'app=web,!canary,env in (prod,staging),owner,tier=front,zone notin (b)');
    assert.equal(matchesLabels(expr, { app: 'web', tier: 'front', env: 'prod', owner: 'me' }), true);
    assert.equal(matchesLabels(expr, { app: 'web', tier: 'front', env: 'prod', owner: 'me', canary: '' }), false);
    assert.equal(matchesLabels(expr, { app: 'web', tier: 'front', env: 'dev', owner: 'me' }), false);
  });

  it('rejects bad requirements with upstream messages', () => {
    const error = (sel: Parameters<typeof selectorFromLabelSelector>[0]): string => {
      try {
        selectorFromLabelSelector(sel);
      } catch (err) {
        assert.ok(err instanceof SelectorError);
        return err.message;
      }
      return assert.fail('expected an error');
    };
    const bogus = { key: 'a', operator: 'Foo' } as unknown as { key: string; operator: 'In' };
    assert.equal(error({ matchExpressions: [bogus] }), '"Foo" is not a valid label selector operator');
    const inherited = { key: 'a', operator: 'constructor' } as unknown as { key: string; operator: 'In' };
    assert.equal(error({ matchExpressions: [inherited] }), '"constructor" is not a valid label selector operator');
    assert.equal(
      error({ matchExpressions: [{ key: 'a', operator: 'In' }] }),
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty",
    );
    assert.equal(
      error({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }),
      'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist',
    );
    assert.equal(error({ matchLabels: { '-a': 'x' } }), `key: Invalid value: "-a": ${NAME_PART_MSG}`);
    assert.equal(error({ matchLabels: { app: '-web' } }), `values[0][app]: Invalid value: "-web": ${VALUE_MSG}`);
  });
});

describe('newLabelRequirement', () => {
  it('aggregates several problems', () => {
    assert.throws(() => newLabelRequirement('-k', '=', ['a', 'b']), {
      message: `[key: Invalid value: "-k": ${NAME_PART_MSG}, values: Invalid value: []string{"a", "b"}: exact-match compatibility requires one single value]`,
    });
    assert.throws(() => newLabelRequirement('k', 'gt', ['1', '2']), {
      message: `values: Invalid value: []string{"1", "2"}: for 'Gt', 'Lt' operators, exactly one value is required`,
    });
  });
});

describe('selectorFromMap', () => {
  it('builds equality requirements sorted by key', () => {
    const expr = selectorFromMap({ b: '2', a: '1' });
    assert.equal(formatLabelSelector(expr), 'a=1,b=2');
    assert.equal(matchesLabels(expr, { a: '1', b: '2', c: '3' }), true);
    assert.equal(matchesLabels(expr, { a: '1' }), false);
  });
  it('matches everything when empty or absent', () => {
    assert.ok(isEverything(selectorFromMap({})));
    assert.ok(isEverything(selectorFromMap(undefined)));
    assert.ok(isEverything(selectorFromMap(null)));
  });
});

describe('goQuote', () => {
  it('quotes like Go %q', () => {
    assert.equal(goQuote('a"b\\c'), '"a\\"b\\\\c"');
    assert.equal(goQuote('a\nb\u0001'), '"a\\nb\\x01"');
    assert.equal(goQuote('é'), '"é"');
  });
});
