import { pino } from 'pino';
import type { Logger } from '../core/index.ts';
import type { LogFormat } from '../core/settings.ts';

/** Paths pino blanks in every log line: secrets never reach logs, wherever they are nested. */
export const redactedPaths = [
  'token',
  '*.token',
  'password',
  '*.password',
  'authorization',
  '*.authorization',
  'headers.authorization',
  'secret',
  '*.secret',
  'applicationCredentialSecret',
  '*.applicationCredentialSecret',
  'auth.*.password',
];

/** A stream as pino writes to it: one serialized line per call. */
export interface LineSink {
  write(line: string): void;
}

/**
 * The process logger: lines on stderr (so stdout stays for command output), secrets redacted (before formatting, so
 * in both formats). `json`: pino's own lines; `text`: {@link textLine}'s.
 */
export function createLogger(level: string, format: 'json' | 'text' = 'json', sink?: LineSink): Logger {
  const options = { level, redact: { paths: redactedPaths, censor: '[redacted]' } };
  if (format === 'json') return pino(options, sink ?? pino.destination(2));
  const out = sink ?? process.stderr;
  const color = sink === undefined && process.stderr.isTTY && !process.env.NO_COLOR;
  return pino(options, { write: (line: string) => out.write(textLine(line, color)) });
}

/**
 * `auto` settled: text only when a person reads the logs as they come (`interactive`, e.g. `raven dev`) on a terminal
 * (stderr, where they go); JSON for a collector, a file or a pipe.
 */
export function resolveLogFormat(
  format: LogFormat,
  interactive: boolean,
  isTTY = process.stderr.isTTY,
): 'json' | 'text' {
  if (format !== 'auto') return format;
  return interactive && isTTY === true ? 'text' : 'json';
}

const levelNames: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
const levelColors: Record<number, string> = { 40: '\u001b[33m', 50: '\u001b[31m', 60: '\u001b[31m' };
/** pino's fields that the line's head already says (or that say nothing to a person at a terminal). */
const headFields = new Set(['level', 'time', 'pid', 'hostname', 'msg', 'component']);
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * One pino JSON line as a person reads it: `12:03:04.567 WARN  component: message key=value …` (local time; strings
 * bare unless they hold spaces or quotes; objects as JSON; an error as its message). Not JSON (never, from pino): as is.
 */
export function textLine(json: string, color = false): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const time = new Date(typeof entry.time === 'number' ? entry.time : Date.now());
  const clock = `${pad(time.getHours())}:${pad(time.getMinutes())}:${pad(time.getSeconds())}.${pad(time.getMilliseconds(), 3)}`;
  const level = typeof entry.level === 'number' ? entry.level : 30;
  const name = (levelNames[level] ?? String(level)).padEnd(5);
  const paint = color && levelColors[level] ? `${levelColors[level]}${name}\u001b[0m` : name;
  const component = typeof entry.component === 'string' ? `${entry.component}: ` : '';
  const fields = Object.entries(entry)
    .filter(([key]) => !headFields.has(key))
    .map(([key, value]) => `${key}=${fieldText(value)}`);
  const msg = typeof entry.msg === 'string' ? entry.msg : '';
  return `${[clock, paint, `${component}${msg}`, ...fields].join(' ')}\n`;
}

function fieldText(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]*$/.test(value) && value !== '' ? value : JSON.stringify(value);
  if (typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string') {
    const err = value as { type?: unknown; code?: unknown; message: string };
    const code = typeof err.code === 'string' ? ` (${err.code})` : '';
    return JSON.stringify(`${typeof err.type === 'string' ? `${err.type}: ` : ''}${err.message}${code}`);
  }
  return JSON.stringify(value) ?? String(value);
}
