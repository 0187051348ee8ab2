import { pino } from 'pino';
import type { Logger } from '../core/index.ts';

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

/** The process logger: JSON lines on stderr (so stdout stays for command output), secrets redacted. */
export function createLogger(level: string): Logger {
  return pino({ level, redact: { paths: redactedPaths, censor: '[redacted]' } }, pino.destination(2));
}
