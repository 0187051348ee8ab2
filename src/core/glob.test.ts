import assert from 'node:assert/strict';
import { describe, it } from '../../test/support/node-test.ts';
import { seeded } from '../../test/support/seeded.ts';
import { globMatch } from './glob.ts';

/** The reference: the same glob as an anchored RegExp, used only on inputs small enough for it to be quick. */
const viaRegExp = (pattern: string, text: string) =>
  new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
    's',
  ).test(text);

describe('globMatch: * and ? without a regular expression, work bounded by pattern × text', () => {
  it('matches as a glob: * any run (none too), ? one character, everything else literal', () => {
    const cases: [string, string, boolean][] = [
      ['public-*', 'public-v4', true],
      ['public-*', 'public-', true],
      ['public-*', 'private-v4', false],
      ['ext-?', 'ext-1', true],
      ['ext-?', 'ext-10', false],
      ['*', '', true],
      ['', '', true],
      ['', 'a', false],
      ['a*b*c', 'aXbYbZc', true],
      ['a*b*c', 'aXbYbZ', false],
      ['.*', 'anything', false],
      ['a.b', 'aXb', false],
      ['[a]', '[a]', true],
      ['*?', '', false],
      ['**a', 'ba', true],
    ];
    for (const [pattern, text, want] of cases) assert.equal(globMatch(pattern, text), want, `${pattern} ~ ${text}`);
  });

  it('fuzz (fixed seed): agrees with the RegExp on small inputs, and never takes more than (p+1)(t+2) steps', () => {
    const random = seeded(26);
    const pick = (alphabet: string, max: number) =>
      Array.from(
        { length: Math.floor(random() * (max + 1)) },
        () => alphabet[Math.floor(random() * alphabet.length)],
      ).join('');
    for (let n = 0; n < 5000; n++) {
      const pattern = pick('ab*?', 12);
      const text = pick('ab', 14);
      const counter = { steps: 0 };
      assert.equal(globMatch(pattern, text, counter), viaRegExp(pattern, text), `${pattern} ~ ${text}`);
      assert.ok(counter.steps <= (pattern.length + 1) * (text.length + 2), `${pattern} ~ ${text}: ${counter.steps}`);
    }
  });

  it('the pattern that froze the controller (twenty stars against a long name that fails at the end) is quick', () => {
    // As a RegExp this is C(20+60, 20) paths; here it is bounded by the product of the lengths.
    const pattern = `${'*a'.repeat(20)}*b`;
    const text = 'a'.repeat(255);
    const counter = { steps: 0 };
    assert.equal(globMatch(pattern, text, counter), false);
    assert.ok(counter.steps <= (pattern.length + 1) * (text.length + 2), `${counter.steps} steps`);
    const worst = { steps: 0 };
    globMatch('*'.repeat(255), 'a'.repeat(255), worst);
    assert.ok(worst.steps <= 256 * 257, `${worst.steps} steps`);
  });
});
