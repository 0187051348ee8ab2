import { stringify as toYaml } from 'yaml';
import type { Status } from '../../../../src/kube/api/index.ts';
import { encodeObject } from '../protobuf/index.ts';
import { contentTypeOf, type Format } from './negotiate.ts';

export type { Format };

/** The bytes of a body in `format`; protobuf objects without an apiVersion (discovery's APIVersions) are `v1`. */
export function encodeBody(body: unknown, format: Format): Uint8Array {
  if (format === 'protobuf') {
    const obj = body as Record<string, unknown>;
    return encodeObject(obj.apiVersion === undefined ? { apiVersion: 'v1', ...obj } : obj);
  }
  return Buffer.from(format === 'yaml' ? toYaml(body) : JSON.stringify(body));
}

/** A response in `format` (JSON unless negotiated otherwise). */
export function respond(
  status: number,
  body: unknown,
  format: Format = 'json',
  headers?: Record<string, string>,
): Response {
  const bytes = encodeBody(body, format);
  // content-length marks a complete body: the HTTP binding then sends it in one write instead of streaming it.
  return new Response(bytes, {
    status,
    headers: { 'content-type': contentTypeOf(format), 'content-length': String(bytes.byteLength), ...headers },
  });
}

/** A failure `Status` as the response body, with the status code it names. */
export function respondStatus(status: Status, format: Format = 'json', headers?: Record<string, string>): Response {
  return respond(status.code, status, format, headers);
}
