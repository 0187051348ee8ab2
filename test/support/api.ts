/**
 * Small request helpers for end-to-end tests: JSON in and out over a real connection, every request bounded by a
 * timeout, and assertions on the `Status` bodies of failures.
 */
import assert from 'node:assert/strict';
import { Headers, fetch, type Dispatcher, type RequestInit } from 'undici';
import type { KubeList, KubeObject, Status } from '../../src/kube/api/index.ts';
import type { Requester } from './watch.ts';

export const REQUEST_TIMEOUT_MS = 15_000;

/** A client of `baseUrl` with its own dispatcher (connection pool, CA) and bearer token. */
export function requester(baseUrl: string, token: string, dispatcher?: Dispatcher): Requester {
  return {
    request(path: string, init: RequestInit = {}) {
      const headers = new Headers(init.headers);
      headers.set('authorization', `Bearer ${token}`);
      return fetch(`${baseUrl}${path}`, { ...init, headers, ...(dispatcher ? { dispatcher } : {}) });
    },
  };
}

export interface Reply<T = KubeObject> {
  status: number;
  body: T;
  headers: Headers;
}

/** One request with an optional JSON body; the reply body parsed as JSON (undefined when empty). */
export async function call<T = KubeObject>(
  server: Requester,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<Reply<T>> {
  const res = await server.request(path, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': contentType } }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** A request that must succeed (2xx); returns the body. */
export async function ok<T = KubeObject>(
  server: Requester,
  method: string,
  path: string,
  body?: unknown,
  contentType?: string,
): Promise<T> {
  const reply = await call<T>(server, method, path, body, contentType);
  assert.ok(
    reply.status >= 200 && reply.status < 300,
    `${method} ${path} → ${reply.status}: ${JSON.stringify(reply.body)}`,
  );
  return reply.body;
}

/** Asserts a failure reply: the HTTP status, and a `Status` body with the same code and the given reason. */
export function assertFailure(reply: Pick<Reply<unknown>, 'status' | 'body'>, code: number, reason: string): Status {
  const status = reply.body as Status;
  assert.equal(reply.status, code, `expected ${code} ${reason}, got ${reply.status}: ${JSON.stringify(reply.body)}`);
  assert.equal(status.kind, 'Status');
  assert.equal(status.apiVersion, 'v1');
  assert.equal(status.status, 'Failure');
  assert.equal(status.code, code);
  assert.equal(status.reason, reason);
  return status;
}

export const get = <T = KubeObject>(server: Requester, path: string): Promise<Reply<T>> => call<T>(server, 'GET', path);

/** The items of a list (asserting 200). */
export async function listItems(server: Requester, path: string): Promise<KubeObject[]> {
  return (await ok<KubeList>(server, 'GET', path)).items;
}

/** Creates a namespace and returns its name. */
export async function createNamespace(server: Requester, name: string): Promise<string> {
  await ok(server, 'POST', '/api/v1/namespaces', { metadata: { name } });
  return name;
}

/** A configmap body. */
export function configMap(
  name: string,
  extra: { labels?: Record<string, string>; finalizers?: string[]; data?: Record<string, string> } = {},
): KubeObject {
  const metadata: KubeObject['metadata'] = { name };
  if (extra.labels) metadata.labels = extra.labels;
  if (extra.finalizers) metadata.finalizers = extra.finalizers;
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: extra.data ?? { key: 'value' } };
}

/** A minimal valid pod body. */
export function pod(name: string, labels?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: { containers: [{ name: 'main', image: 'registry.example/app:1.0' }] },
  };
}

/** The RV of an object or list as a number. */
export function rv(obj: { metadata: { resourceVersion?: string } }): number {
  const n = Number(obj.metadata.resourceVersion);
  assert.ok(Number.isSafeInteger(n) && n > 0, `resourceVersion ${String(obj.metadata.resourceVersion)}`);
  return n;
}
