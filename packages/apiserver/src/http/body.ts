import { parse as parseYaml } from 'yaml';
import { errorMessage } from '../../../../src/core/index.ts';
import { decodeObject } from '../protobuf/index.ts';
import { apiErrors } from './errors.ts';
import { mediaType, type Format } from './negotiate.ts';

export { mediaType };

/** Go's JSON decoders refuse nesting deeper than this (encoding/json's maxNestingDepth). */
export const MAX_JSON_DEPTH = 10_000;

/** The deepest nesting of arrays and objects in JSON text, counted without parsing (strings skipped). */
function jsonDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > max && (max = depth) > limit) return max;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return max;
}

/** What a body too deep to decode gets (400, as the real server's decoder reports it). */
function tooDeep(text: string, kind: string | undefined): never {
  const summary = text.length > 30 ? `${text.slice(0, 30)} ...` : text;
  throw apiErrors.badRequest(
    `the object provided is unrecognized (must be of type ${kind ?? 'Object'}): exceeded max depth (${summary})`,
  );
}

/**
 * Parses a JSON or YAML request body; a body that is neither → 400, an empty body → undefined, nesting deeper than
 * {@link MAX_JSON_DEPTH} → 400. `kind` names the expected kind in messages.
 */
export function parseBody(text: string, contentType: string | null, kind?: string): unknown {
  if (text.trim() === '') return undefined;
  const type = mediaType(contentType);
  const yaml = type === 'application/yaml' || type === 'application/apply-patch+yaml' || type === 'text/yaml';
  if (!yaml && jsonDepth(text, MAX_JSON_DEPTH) > MAX_JSON_DEPTH) tooDeep(text, kind);
  try {
    return yaml ? (parseYaml(text, { maxAliasCount: 100 }) as unknown) : (JSON.parse(text) as unknown);
  } catch (err) {
    if (err instanceof RangeError) tooDeep(text, kind);
    throw apiErrors.badRequest(
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (${errorMessage(err)})`,
    );
  }
}

/**
 * Reads a request body in the negotiated input format: JSON or YAML text, or a protobuf object (its envelope names
 * the kind; `expected` is used when it names none). An empty body → undefined; a malformed one → 400.
 */
export async function readBody(
  request: Request,
  format: Format,
  expected?: { apiVersion: string; kind: string },
): Promise<unknown> {
  if (format !== 'protobuf')
    return parseBody(await request.text(), request.headers.get('content-type'), expected?.kind);
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.length === 0) return undefined;
  try {
    return decodeObject(bytes, expected);
  } catch (err) {
    throw apiErrors.badRequest(errorMessage(err));
  }
}
