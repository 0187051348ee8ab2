import { parse as parseYaml } from 'yaml';
import { errorMessage } from '../../core/index.ts';
import { apiErrors } from './errors.ts';

/** Media type of a Content-Type/Accept entry, without parameters, lower-cased. */
export function mediaType(header: string | null): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Parses a JSON or YAML request body; a body that is neither → 400, an empty body → undefined. */
export function parseBody(text: string, contentType: string | null): unknown {
  if (text.trim() === '') return undefined;
  const type = mediaType(contentType);
  try {
    if (type === 'application/yaml' || type === 'application/apply-patch+yaml' || type === 'text/yaml')
      return parseYaml(text) as unknown;
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw apiErrors.badRequest(
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (${errorMessage(err)})`,
    );
  }
}
