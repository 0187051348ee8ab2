import { parseBody, mediaType } from '../http/body.ts';
import { apiErrors } from '../http/errors.ts';
import { formatOf, respond } from '../http/respond.ts';
import type { RequestInfo } from '../http/request-info.ts';
import { patchTypeOf } from '../patch/index.ts';
import { targetOf, type ApiContext } from './context.ts';
import { deleteCollection, deleteObject, deleteOptionsOf } from './delete.ts';
import { getObject, includeObjectOf, listObjects, watchObjects } from './read.ts';
import { toTable, wantsTable } from './table.ts';
import { bindPod, createObject, patchObject, updateObject } from './write.ts';

const bodyTypes = new Set(['', 'application/json', 'application/yaml', 'text/yaml', '*/*']);

function checkAccept(accept: string | null): void {
  if (!accept) return;
  const types = accept.split(',').map((t) => mediaType(t));
  if (!types.some((t) => t === 'application/json' || t === 'application/yaml' || t === '*/*' || t === 'application/*' || t === '')) {
    throw apiErrors.notAcceptable(accept);
  }
}

function dryRunOf(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  for (const value of values) {
    if (value !== 'All') throw apiErrors.badRequest(`dryRun: Unsupported value: "${value}": supported values: "All"`);
  }
  return values.length > 0;
}

/** Serves one resource request (see `parseRequestInfo`): finds the kind, checks scope and media types, runs the verb. */
export async function handleResource(ctx: ApiContext, request: Request, url: URL, info: RequestInfo): Promise<Response> {
  const def = ctx.registry.lookup(info.group, info.version, info.resource);
  if (!def) throw apiErrors.pathNotFound();
  if (!def.namespaced && info.namespace !== undefined) throw apiErrors.pathNotFound();
  if (info.subresource !== undefined && !(def.subresources ?? []).includes(info.subresource as 'status')) throw apiErrors.pathNotFound();
  if (info.subresource === 'binding' && info.verb !== 'create') throw apiErrors.methodNotAllowed();
  const accept = request.headers.get('accept');
  checkAccept(accept);
  const format = formatOf(accept);
  const query = url.searchParams;
  const target = targetOf(def, info.version, info.namespace);
  const needsNamespace = def.namespaced && info.namespace === undefined;
  const name = info.name;
  const readBody = async (): Promise<unknown> => parseBody(await request.text(), request.headers.get('content-type'));

  switch (info.verb) {
    case 'get': {
      if (needsNamespace) throw apiErrors.pathNotFound();
      const obj = getObject(ctx, target, name!);
      if (wantsTable(accept)) return respond(200, toTable(def, [obj], { resourceVersion: obj.metadata.resourceVersion }, includeObjectOf(query)));
      return respond(200, obj, format);
    }
    case 'list': {
      const list = listObjects(ctx, target, query);
      if (wantsTable(accept)) return respond(200, toTable(def, list.items, list.metadata, includeObjectOf(query)));
      return respond(200, list, format);
    }
    case 'watch':
      return watchObjects(ctx, target, query, wantsTable(accept), name);
    case 'create': {
      if (info.subresource === 'binding' && name !== undefined && !needsNamespace) {
        return respond(201, bindPod(ctx, target, name, await readBody(), dryRunOf(query)), format);
      }
      if (name !== undefined || needsNamespace) throw apiErrors.methodNotAllowed();
      const type = mediaType(request.headers.get('content-type'));
      if (!bodyTypes.has(type)) throw apiErrors.unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (got ${type})`);
      const result = createObject(ctx, target, await readBody(), dryRunOf(query));
      return respond(result.status, result.object, format);
    }
    case 'update': {
      if (name === undefined || needsNamespace) throw apiErrors.methodNotAllowed();
      const type = mediaType(request.headers.get('content-type'));
      if (!bodyTypes.has(type)) throw apiErrors.unsupportedMediaType(`the body of the request was in an unknown format - accepted media types include: application/json, application/yaml (got ${type})`);
      const result = updateObject(ctx, target, name, await readBody(), info.subresource, dryRunOf(query));
      return respond(result.status, result.object, format);
    }
    case 'patch': {
      if (name === undefined || needsNamespace) throw apiErrors.methodNotAllowed();
      const patchType = patchTypeOf(request.headers.get('content-type') ?? '');
      if (!patchType) {
        throw apiErrors.unsupportedMediaType('the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json');
      }
      const text = await request.text();
      const patch = patchType === 'apply' ? parseBody(text, 'application/yaml') : parseBody(text, 'application/json');
      if (patch === undefined) throw apiErrors.badRequest('the patch body is empty');
      const result = patchObject(ctx, target, name, patchType, patch, info.subresource, dryRunOf(query));
      return respond(result.status, result.object, format);
    }
    case 'delete': {
      if (needsNamespace) throw apiErrors.methodNotAllowed();
      const options = deleteOptionsOf(await readBody(), query);
      return respond(200, deleteObject(ctx, target, name!, options, dryRunOf(query)), format);
    }
    case 'deletecollection': {
      const options = deleteOptionsOf(await readBody(), query);
      return respond(200, deleteCollection(ctx, target, query, options, dryRunOf(query)), format);
    }
  }
}
