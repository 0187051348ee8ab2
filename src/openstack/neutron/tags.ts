import { isOpenStackError } from '../errors.ts';
import type { OpenStackResponse } from '../session.ts';
import { seg, type CallOptions } from './query.ts';
import { badResponse, type NeutronTransport } from './resource.ts';

/** The collections whose resources take tags (Neutron's `standard-attr-tag` extension). */
export type TaggableResource =
  'networks' | 'subnets' | 'ports' | 'routers' | 'floatingips' | 'security-groups' | 'subnetpools' | 'trunks';

/**
 * Tags of any standard-attribute resource (`/v2.0/<collection>/<id>/tags`). A missing resource rejects with 404
 * `TagResourceNotFound` (not `NetworkNotFound` …) from every method; a missing tag is `false` from `has` / `remove`,
 * never an error. Every tag change is a revision of the resource (`revision_number` + 1).
 *
 * @example
 * await neutron.tags.add('networks', net.id, `raven-ns=${ns.metadata.uid}`, { signal });
 */
export class TagsApi {
  readonly #transport: NeutronTransport;

  constructor(transport: NeutronTransport) {
    this.#transport = transport;
  }

  /** The resource's tags. */
  async list(resource: TaggableResource, id: string, options: CallOptions = {}): Promise<string[]> {
    const path = `/${resource}/${seg(id)}/tags`;
    const res = await this.#transport.send<{ tags?: unknown }>('GET', path, options);
    return tagsOf(res, 'GET', path);
  }

  /** Replaces all of the resource's tags with `tags`; resolves with the tags now set. */
  async replace(
    resource: TaggableResource,
    id: string,
    tags: readonly string[],
    options: CallOptions = {},
  ): Promise<string[]> {
    const path = `/${resource}/${seg(id)}/tags`;
    const res = await this.#transport.send<{ tags?: unknown }>('PUT', path, { body: { tags }, ...options });
    return tagsOf(res, 'PUT', path);
  }

  /** Adds one tag (a no-op when it is there already). */
  async add(resource: TaggableResource, id: string, tag: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.send('PUT', `/${resource}/${seg(id)}/tags/${seg(tag)}`, options);
  }

  /** Removes one tag: `true` when it was there, `false` when it was not (`TagNotFound`). */
  async remove(resource: TaggableResource, id: string, tag: string, options: CallOptions = {}): Promise<boolean> {
    try {
      await this.#transport.send('DELETE', `/${resource}/${seg(id)}/tags/${seg(tag)}`, options);
      return true;
    } catch (err) {
      if (isOpenStackError(err, 'TagNotFound')) return false;
      throw err;
    }
  }

  /** Removes every tag of the resource. */
  async clear(resource: TaggableResource, id: string, options: CallOptions = {}): Promise<void> {
    await this.#transport.send('DELETE', `/${resource}/${seg(id)}/tags`, options);
  }

  /** Whether the resource has `tag` (one `GET …/tags/<tag>`: 204 yes, 404 `TagNotFound` no). */
  async has(resource: TaggableResource, id: string, tag: string, options: CallOptions = {}): Promise<boolean> {
    try {
      await this.#transport.send('GET', `/${resource}/${seg(id)}/tags/${seg(tag)}`, options);
      return true;
    } catch (err) {
      if (isOpenStackError(err, 'TagNotFound')) return false;
      throw err;
    }
  }
}

function tagsOf(res: OpenStackResponse<{ tags?: unknown } | undefined>, method: string, path: string): string[] {
  const tags = res.body?.tags;
  if (!Array.isArray(tags) || !tags.every((t) => typeof t === 'string'))
    throw badResponse(res, method, path, 'no "tags" list in the answer');
  return tags;
}
