/**
 * HTTP helpers shared by the three services: JSON responses, a throwable error response, and the three error body
 * shapes (Neutron's `NeutronError`, Octavia's wsme fault, Keystone's `error`).
 */

/**
 * A response to send instead of the normal one; handlers throw it and the service's router turns it into a Response.
 */
export class SimHttpError extends Error {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Readonly<Record<string, string>>;

  constructor(status: number, body: unknown, headers: Record<string, string> = {}, message?: string) {
    super(message ?? `HTTP ${status}`);
    this.name = 'SimHttpError';
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

/** A JSON response (no body for 204, or when `body` is undefined). */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  if (status === 204 || body === undefined) return new Response(null, { status, headers });
  const text = JSON.stringify(body);
  return new Response(text, {
    status,
    headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers },
  });
}

/** Neutron's error body: `{"NeutronError": {"type", "message", "detail": ""}}`. */
export function neutronError(status: number, type: string, message: string): SimHttpError {
  return new SimHttpError(status, { NeutronError: { type, message, detail: '' } }, {}, `${type}: ${message}`);
}

/** Octavia's (wsme) error body: `{"faultcode": "Client"|"Server", "faultstring", "debuginfo": null}`. */
export function octaviaError(status: number, message: string): SimHttpError {
  return new SimHttpError(
    status,
    { faultcode: status >= 500 ? 'Server' : 'Client', faultstring: message, debuginfo: null },
    {},
    message,
  );
}

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  409: 'Conflict',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Keystone's error body (also keystonemiddleware's 401): `{"error": {"code", "title", "message"}}`. */
export function keystoneError(status: number, message: string, headers: Record<string, string> = {}): SimHttpError {
  return new SimHttpError(
    status,
    { error: { code: status, title: titles[status] ?? 'Error', message } },
    headers,
    message,
  );
}

/** The text of keystonemiddleware's 401 (and Keystone's own for a failed authentication). */
export const authRequiredMessage = 'The request you have made requires authentication.';

/** Reads a request body as JSON; `undefined` when empty, `SyntaxError` when not JSON. */
export async function readJson(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.trim() === '') return undefined;
  return JSON.parse(text) as unknown;
}

/** True for a plain JSON object (not an array, not null). */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Any JSON value as text for a message (strings as they are). */
export function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return JSON.stringify(value) ?? 'None';
}
