import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from './node-test.ts';

const fixture = fileURLToPath(new URL('fixtures/bounds.fixture.ts', import.meta.url));
const exitWatch = fileURLToPath(new URL('exit-watch.ts', import.meta.url));

/** This file runs as a test runner's child: the fixture's own runner must not think it is one too. */
const { NODE_TEST_CONTEXT: _, ...runnerEnv } = process.env;

/** The fixture run as `npm run test:node` runs a file: its own process, the exit watch loaded, TAP out. */
function runFixture(): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', '--import', exitWatch, '--test', '--test-reporter=tap', '--test-timeout=60000', fixture],
      {
        env: { ...runnerEnv, RAVEN_TEST_TIMEOUT_MS: '300', RAVEN_TEST_EXIT_GRACE_MS: '300' },
        timeout: 60_000,
      },
      (err, stdout, stderr) => resolve({ code: err ? ((err.code as number) ?? 1) : 0, out: stdout + stderr }),
    );
  });
}

describe('every test bounded (node-test.ts) and every test process made to exit (exit-watch.ts)', () => {
  it('a hung test fails by name at the default bound; its neighbours and a suite stating its own bound pass; the server left open is named and fails the file', async () => {
    const { code, out } = await runFixture();
    assert.notEqual(code, 0);
    assert.match(out, /not ok \d+ - waits for ever\n[\s\S]*?test timed out after 300ms/);
    assert.match(out, /\bok \d+ - passes\n/);
    assert.match(out, /\bok \d+ - runs after the one that hung\n/);
    assert.match(out, /\bok \d+ - outlasts the default and passes\n/);
    assert.match(out, /exit-watch: this test file's process was still up 0.3 s after its tests ended, held by:/);
    assert.match(out, /- server listening on 127\.0\.0\.1:\d+/);
  });
});
