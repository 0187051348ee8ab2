import { isObject, neutronError } from '../http.ts';
import { stringProblem, uniqueStringsProblem } from './body.ts';
import { canSee, type Kind, type NeutronCall } from './common.ts';
import { nerr } from './errors.ts';
import type { Item } from './query.ts';

/**
 * The `standard-attr-tag` endpoints on any taggable collection: `/{collection}/{id}/tags[/{tag}]`, as Zed's
 * `TaggingController` and `TagPlugin` answer them:
 *
 * - the tag (or body) is validated first (`validate_tag`/`validate_tags`: strings of at most 255 characters, unique;
 *   commas and empty strings are fine), then the parent is looked up: a missing or invisible one is 404
 *   `TagResourceNotFound` "Resource <collection> <id> could not be found." for every verb. There is no tag policy on
 *   Zed: anyone who can see a resource (e.g. a shared network) can tag it;
 * - `PUT …/tags/{t}` answers 201 with a literal `null` body; `PUT …/tags` answers 200 with the request body itself;
 * - a change of the tag set is a revision of the resource; re-adding a tag, re-setting the same set or clearing no
 *   tags is not;
 * - the pecan routes send `POST …/tags` to `create` (404 "not supported"), `PATCH …/tags` to the list and
 *   `POST`/`PATCH …/tags/{t}` to the check.
 *
 * Tags cannot be given on create (except ports, where they are dropped: see ports.ts).
 */
type Taggable = { id: string; project_id: string; tags: string[]; revision_number: number; updated_at: string };

const maxTagLength = 255;

const tagNotFound = (tag: string) => neutronError(404, 'TagNotFound', `Tag ${tag} could not be found.`);

function validateTag(tag: string): void {
  const problem = stringProblem(tag, maxTagLength);
  if (problem) throw nerr.invalidInput(problem);
}

function validateTagsBody(body: unknown): string[] {
  if (!isObject(body) || !('tags' in body)) throw nerr.invalidInput('Invalid tags body');
  const problem = uniqueStringsProblem(body.tags, maxTagLength);
  if (problem) throw nerr.invalidInput(problem);
  return body.tags as string[];
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((t) => b.includes(t));
}

export function handleTags<R extends Taggable>(
  kind: Kind<R>,
  call: NeutronCall,
  method: string,
  id: string,
  tag: string | undefined,
): { status: number; body?: Item | null } {
  const parent = (): R => {
    const r = kind.map(call.store).get(id);
    if (!r || !canSee(kind, r, call)) throw nerr.tagResourceNotFound(kind.plural, id);
    return r;
  };
  if (tag === undefined) {
    if (method === 'GET' || method === 'PATCH') return { status: 200, body: { tags: [...parent().tags].sort() } };
    if (method === 'POST') throw neutronError(404, 'HTTPNotFound', 'not supported');
    if (method === 'PUT') {
      // No body at all: `update_all` is called without its `body` argument (a TypeError, so a 500).
      if (call.body === undefined)
        throw neutronError(
          500,
          'HTTPInternalServerError',
          'Request Failed: internal server error while processing your request.',
        );
      const tags = validateTagsBody(call.body);
      const r = parent();
      if (!sameSet(r.tags, tags)) {
        r.tags = [...tags];
        call.store.touch(r);
      }
      return { status: 200, body: call.body as Item };
    }
    if (method === 'DELETE') {
      const r = parent();
      if (r.tags.length > 0) {
        r.tags = [];
        call.store.touch(r);
      }
      return { status: 204 };
    }
  } else {
    validateTag(tag);
    if (method === 'GET' || method === 'POST' || method === 'PATCH') {
      if (!parent().tags.includes(tag)) throw tagNotFound(tag);
      return { status: 204 };
    }
    if (method === 'PUT') {
      const r = parent();
      if (!r.tags.includes(tag)) {
        r.tags.push(tag);
        call.store.touch(r);
      }
      return { status: 201, body: null };
    }
    if (method === 'DELETE') {
      const r = parent();
      if (!r.tags.includes(tag)) throw tagNotFound(tag);
      r.tags = r.tags.filter((t) => t !== tag);
      call.store.touch(r);
      return { status: 204 };
    }
  }
  throw neutronError(
    405,
    'HTTPMethodNotAllowed',
    'The server could not comply with the request since it is either malformed or otherwise incorrect.',
  );
}
