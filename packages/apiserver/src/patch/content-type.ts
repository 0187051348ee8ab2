/** The four PATCH flavours the API server accepts, named after their `Content-Type`. */
export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

const PATCH_TYPES: ReadonlyMap<string, PatchType> = new Map([
  ['application/json-patch+json', 'json'],
  ['application/merge-patch+json', 'merge'],
  ['application/strategic-merge-patch+json', 'strategic'],
  ['application/apply-patch+yaml', 'apply'],
]);

/**
 * The patch type a PATCH request's `Content-Type` names, or undefined (the server answers 415). Parameters such as
 * `; charset=utf-8` are ignored, and so are case and surrounding spaces, as media types are case-insensitive.
 *
 * @example
 * patchTypeOf('application/merge-patch+json; charset=utf-8'); // → 'merge'
 * patchTypeOf('application/json');                            // → undefined
 */
export function patchTypeOf(contentType: string): PatchType | undefined {
  const mediaType = contentType.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  return PATCH_TYPES.get(mediaType);
}
