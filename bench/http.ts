/**
 * The load generator's HTTP client: undici 7 over one keep-alive pool per benchmark, to 127.0.0.1 only.
 */
import { Agent, request } from 'undici';

export interface Target {
  url: string;
  token: string;
  caPem: string | null;
}

/** A keep-alive pool of `connections` sockets (one request in flight per socket, as Kubernetes clients do). */
export function keepAliveAgent(target: Target, connections: number): Agent {
  if (!/^https?:\/\/127\.0\.0\.1:/.test(target.url))
    throw new Error(`benchmarks talk to 127.0.0.1 only, not ${target.url}`);
  return new Agent({
    connections,
    pipelining: 1,
    keepAliveTimeout: 30_000,
    bodyTimeout: 0,
    ...(target.caPem ? { connect: { ca: target.caPem } } : {}),
  });
}

export interface Reply {
  status: number;
  text: string;
}

/** One request with the bearer token; the whole body is read as text. */
export async function call(
  agent: Agent,
  target: Target,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  body?: object,
): Promise<Reply> {
  const res = await request(`${target.url}${path}`, {
    method,
    dispatcher: agent,
    headers: {
      authorization: `Bearer ${target.token}`,
      accept: 'application/json',
      ...(body ? { 'content-type': 'application/json' } : {}),
    },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.statusCode, text: await res.body.text() };
}

/** Like {@link call}, but fails unless the status is `expected`. */
export async function callOk(
  agent: Agent,
  target: Target,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  expected: number,
  body?: object,
): Promise<string> {
  const reply = await call(agent, target, method, path, body);
  if (reply.status !== expected)
    throw new Error(`${method} ${path}: HTTP ${reply.status} (expected ${expected}): ${reply.text.slice(0, 300)}`);
  return reply.text;
}

/** Creates a namespace (201), or accepts that it exists (409). */
export async function ensureNamespace(agent: Agent, target: Target, name: string): Promise<void> {
  const reply = await call(agent, target, 'POST', '/api/v1/namespaces', { metadata: { name } });
  if (reply.status !== 201 && reply.status !== 409)
    throw new Error(`create namespace ${name}: HTTP ${reply.status}: ${reply.text.slice(0, 300)}`);
}

/** `metadata.resourceVersion` of a JSON object response. */
export function resourceVersionOf(text: string): string {
  const rv = (JSON.parse(text) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
  if (!rv) throw new Error('response has no metadata.resourceVersion');
  return rv;
}
