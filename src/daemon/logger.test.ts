import assert from 'node:assert/strict';
import { describe, it } from '../../test/support/node-test.ts';
import { createLogger, resolveLogFormat, textLine } from './logger.ts';

/** A logger of `format` whose lines are collected. */
function collecting(format: 'json' | 'text') {
  const lines: string[] = [];
  return { lines, logger: createLogger('info', format, { write: (line) => lines.push(line) }) };
}

describe('createLogger', () => {
  it('text: one readable line (time, level, component, message, fields), secrets still redacted', () => {
    const { lines, logger } = collecting('text');
    logger
      .child({ component: 'pods' })
      .warn(
        { pod: 'shop/web', ips: ['10.244.0.2'], reason: 'over quota', password: 'hunter2', err: new Error('boom') },
        'port not created',
      );
    logger.debug({}, 'not shown');
    assert.equal(lines.length, 1);
    assert.match(
      lines[0]!,
      /^\d\d:\d\d:\d\d\.\d{3} WARN {2}pods: port not created pod=shop\/web ips=\["10\.244\.0\.2"\] reason="over quota" password=\[redacted\] err="Error: boom"\n$/,
    );
    assert.ok(!lines[0]!.includes('hunter2'));
  });

  it('json: pino lines as before', () => {
    const { lines, logger } = collecting('json');
    logger.info({ token: 'abc' }, 'hello');
    const entry = JSON.parse(lines[0]!) as Record<string, unknown>;
    assert.deepEqual([entry.level, entry.msg, entry.token], [30, 'hello', '[redacted]']);
  });

  it('textLine passes anything but JSON through', () => {
    assert.equal(textLine('plain\n'), 'plain\n');
  });
});

describe('resolveLogFormat', () => {
  it('auto: text only for an interactive command on a terminal; an explicit format always wins', () => {
    assert.equal(resolveLogFormat('auto', true, true), 'text');
    assert.equal(resolveLogFormat('auto', true, false), 'json');
    assert.equal(resolveLogFormat('auto', false, true), 'json');
    assert.equal(resolveLogFormat('json', true, true), 'json');
    assert.equal(resolveLogFormat('text', false, false), 'text');
  });
});
