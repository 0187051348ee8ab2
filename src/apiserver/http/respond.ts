import { stringify as toYaml } from 'yaml';
import type { Status } from '../../kube/api/index.ts';
import { mediaType } from './body.ts';

export type Format = 'json' | 'yaml';

/** The response format from an Accept header: YAML only when asked for first, JSON otherwise. */
export function formatOf(accept: string | null): Format {
  return mediaType(accept) === 'application/yaml' ? 'yaml' : 'json';
}

/** A JSON (or YAML) response. */
export function respond(
  status: number,
  body: unknown,
  format: Format = 'json',
  headers?: Record<string, string>,
): Response {
  const bytes = Buffer.from(format === 'yaml' ? toYaml(body) : JSON.stringify(body));
  // content-length marks a complete body: the HTTP binding then sends it in one write instead of streaming it.
  return new Response(bytes, {
    status,
    headers: {
      'content-type': format === 'yaml' ? 'application/yaml' : 'application/json',
      'content-length': String(bytes.byteLength),
      ...headers,
    },
  });
}

/** A failure `Status` as the response body, with the status code it names. */
export function respondStatus(status: Status, format: Format = 'json'): Response {
  return respond(status.code, status, format);
}
