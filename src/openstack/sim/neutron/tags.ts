import { isObject, neutronError } from '../http.ts';
import { findOwned, findVisible, type Kind, type NeutronCall } from './common.ts';
import { nerr } from './errors.ts';
import type { Item } from './query.ts';

/**
 * The `standard-attr-tag` endpoints on any taggable collection: `/{collection}/{id}/tags[/{tag}]`. Each change is a
 * revision of the resource. (Tags cannot be given on create on Zed; see body.ts.)
 */
type Taggable = { id: string; project_id: string; tags: string[]; revision_number: number; updated_at: string };

const tagNotFound = (tag: string) => neutronError(404, 'TagNotFound', `Tag ${tag} could not be found.`);

function checkTag(tag: unknown): string {
  if (typeof tag !== 'string' || tag === '' || tag.length > 255 || tag.includes(',')) {
    throw nerr.invalidAttr('tags', `'${String(tag)}' is not a valid tag`);
  }
  return tag;
}

export function handleTags<R extends Taggable>(kind: Kind<R>, call: NeutronCall, method: string, id: string, tag: string | undefined): { status: number; body?: Item } {
  if (method === 'GET') {
    const r = findVisible(kind, call, id);
    if (tag === undefined) return { status: 200, body: { tags: [...r.tags].sort() } };
    if (!r.tags.includes(tag)) throw tagNotFound(tag);
    return { status: 204 };
  }
  const r = findOwned(kind, call, id, 'update');
  if (method === 'PUT' && tag !== undefined) {
    if (!r.tags.includes(checkTag(tag))) {
      r.tags.push(tag);
      call.store.touch(r);
    }
    return { status: 201 };
  }
  if (method === 'PUT') {
    if (!isObject(call.body) || !Array.isArray(call.body.tags)) throw nerr.invalidInput('Invalid tags body');
    const tags = (call.body.tags as unknown[]).map(checkTag);
    r.tags = [...new Set(tags)];
    call.store.touch(r);
    return { status: 200, body: { tags } };
  }
  if (method === 'DELETE' && tag !== undefined) {
    if (!r.tags.includes(tag)) throw tagNotFound(tag);
    r.tags = r.tags.filter((t) => t !== tag);
    call.store.touch(r);
    return { status: 204 };
  }
  if (method === 'DELETE') {
    r.tags = [];
    call.store.touch(r);
    return { status: 204 };
  }
  throw neutronError(405, 'HTTPMethodNotAllowed', 'The method is not allowed for this resource.');
}
