import { stringify as toYaml } from 'yaml';
import type { Status } from '../../kube/api/index.ts';
import { mediaType } from './body.ts';

export type Format = 'json' | 'yaml';

/** The response format from an Accept header: YAML only when asked for first, JSON otherwise. */
export function formatOf(accept: string | null): Format {
  return mediaType(accept) === 'application/yaml' ? 'yaml' : 'json';
}

/** A JSON (or YAML) response. */
export function respond(status: number, body: unknown, format: Format = 'json', headers?: Record<string, string>): Response {
  if (format === 'yaml') {
    return new Response(toYaml(body), { status, headers: { 'content-type': 'application/yaml', ...headers } });
  }
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** A failure `Status` as the response body, with the status code it names. */
export function respondStatus(status: Status, format: Format = 'json'): Response {
  return respond(status.code, status, format);
}
