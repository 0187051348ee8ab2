/**
 * A glob with `*` (any run of characters, none included) and `?` (any one character), every other character literal,
 * matched without a regular expression: a pattern written by a namespace user (OCCM's `floating-subnet`) turned into
 * a backtracking RegExp took exponential time and froze the controller's only thread.
 *
 * The algorithm keeps one backtrack point, the last `*` seen (Russ Cox, "Glob Matching Can Be Simple And Fast Too"):
 * when a later literal fails, only that star takes one more character. A star never needs to revisit an earlier
 * star's choice, so the work is at most (pattern length + 1) × (text length + 1) steps — never exponential, and
 * bounded by the caps callers put on both lengths.
 *
 * @example
 * globMatch('public-*', 'public-v4'); // true
 * globMatch('ext-?', 'ext-10'); // false
 */
export function globMatch(pattern: string, text: string, counter?: { steps: number }): boolean {
  let p = 0;
  let t = 0;
  // Where to resume after the last star: the pattern just after it, and the next text position it may swallow.
  let starP = -1;
  let starT = 0;
  let steps = 0;
  try {
    while (p < pattern.length || t < text.length) {
      steps++;
      if (p < pattern.length) {
        const c = pattern[p];
        if (c === '*') {
          starP = p;
          starT = t + 1;
          p++;
          continue;
        }
        if (t < text.length && (c === '?' || c === text[t])) {
          p++;
          t++;
          continue;
        }
      }
      // Mismatch (or pattern exhausted early): let the last star take one more character, if it can.
      if (starP >= 0 && starT <= text.length) {
        p = starP + 1;
        t = starT;
        starT++;
        continue;
      }
      return false;
    }
    return true;
  } finally {
    if (counter) counter.steps += steps;
  }
}
