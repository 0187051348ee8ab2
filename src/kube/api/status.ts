import type { Status, StatusDetails, StatusReason } from './types.ts';

/** Builds a failure `Status` the way the API server writes it. */
export function failureStatus(code: number, reason: StatusReason, message: string, details?: StatusDetails): Status {
  const status: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code };
  if (details) status.details = details;
  return status;
}

/** True when a value looks like a `meta/v1 Status` object. */
export function isStatus(value: unknown): value is Status {
  return typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'Status';
}
