import type { StatusCause } from '../../../../src/kube/api/index.ts';
import { parseBody, readBody } from '../http/body.ts';
import { apiErrors } from '../http/errors.ts';
import { inputFormat, negotiateOutput } from '../http/negotiate.ts';
import { respond } from '../http/respond.ts';
import type { RequestInfo } from '../http/request-info.ts';
import { patchTypeOf, type PatchType } from '../patch/index.ts';
import { hasProtobuf } from '../protobuf/index.ts';
import type { UserInfo } from '../auth/index.ts';
import { answerReview, requestToken } from './reviews.ts';
import { patchScale, scaleOf, updateScale } from './scale.ts';
import type { FieldValidation } from './admission.ts';
import { targetOf, type ApiContext } from './context.ts';
import { deleteCollection, deleteObject, deleteOptionsOf } from './delete.ts';
import { boolParam, getObject, includeObjectOf, listObjects, waitUntilFresh, watchObjects } from './read.ts';
import { toTable } from './table.ts';
import { bindPod, createObject, patchObject, updateObject, type WriteOptions } from './write.ts';

function dryRunOf(query: URLSearchParams): boolean {
  const values = query.getAll('dryRun');
  for (const value of values) {
    if (value !== 'All') throw apiErrors.badRequest(`dryRun: Unsupported value: "${value}": supported values: "All"`);
  }
  return values.length > 0;
}

/** FieldManagerMaxLength: a fieldManager longer than this is refused; one derived from the User-Agent is cut to it. */
const FIELD_MANAGER_MAX_BYTES = 128;
const NOT_PRINTABLE = /[^\p{L}\p{M}\p{N}\p{P}\p{S} ]/u;

/**
 * The manager name the real server derives from a User-Agent when no `fieldManager` is given (prefixFromUserAgent):
 * what precedes the first `/` (`kubectl/v1.20.0 (linux/amd64)` → `kubectl`), printable characters only, at most 128
 * bytes; `unknown` when that leaves nothing (buildManagerInfo).
 */
export function managerFromUserAgent(userAgent: string | null): string {
  const product = (userAgent ?? '').split('/', 1)[0]!;
  if (product.length <= FIELD_MANAGER_MAX_BYTES && /^[\x20-\x7e]*$/.test(product)) return product || 'unknown';
  let out = '';
  let bytes = 0;
  for (const char of product) {
    if (NOT_PRINTABLE.test(char)) continue;
    bytes += Buffer.byteLength(char);
    if (bytes > FIELD_MANAGER_MAX_BYTES) break;
    out += char;
  }
  return out || 'unknown';
}

/**
 * CreateOptions, UpdateOptions or PatchOptions from the query, validated as upstream (422 on the options kind):
 * `fieldManager` at most 128 bytes of printable characters, required for apply; `force` only for apply.
 */
function writeOptionsOf(
  query: URLSearchParams,
  userAgent: string | null,
  kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions',
  patchType?: PatchType,
): WriteOptions {
  const causes: StatusCause[] = [];
  const fieldManager = query.get('fieldManager') ?? '';
  if (kind === 'PatchOptions' && patchType !== 'apply' && query.has('force')) {
    causes.push({
      reason: 'FieldValueForbidden',
      field: 'force',
      message: 'Forbidden: may not be specified for non-apply patch',
    });
  }
  if (patchType === 'apply' && fieldManager === '') {
    causes.push({
      reason: 'FieldValueRequired',
      field: 'fieldManager',
      message: 'Required value: is required for apply patch',
    });
  }
  if (Buffer.byteLength(fieldManager) > FIELD_MANAGER_MAX_BYTES) {
    causes.push({
      reason: 'FieldValueTooLong',
      field: 'fieldManager',
      message: `Too long: must have at most ${FIELD_MANAGER_MAX_BYTES} bytes`,
    });
  }
  let position = 0;
  for (const char of fieldManager) {
    if (NOT_PRINTABLE.test(char)) {
      const code = `U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
      causes.push({
        reason: 'FieldValueInvalid',
        field: 'fieldManager',
        message: `Invalid value: ${JSON.stringify(fieldManager)}: invalid character ${code} (at position ${position})`,
      });
    }
    position += Buffer.byteLength(char);
  }
  const fieldValidation = query.get('fieldValidation') ?? 'Warn';
  if (fieldValidation !== 'Strict' && fieldValidation !== 'Warn' && fieldValidation !== 'Ignore') {
    causes.push({
      reason: 'FieldValueNotSupported',
      field: 'fieldValidation',
      message: `Unsupported value: ${JSON.stringify(fieldValidation)}: supported values: "", "Ignore", "Strict", "Warn"`,
    });
  }
  if (causes.length > 0) throw apiErrors.invalid({ group: 'meta.k8s.io', kind }, '', causes);
  return {
    fieldValidation: fieldValidation as FieldValidation,
    warnings: [],
    dryRun: dryRunOf(query),
    fieldManager: fieldManager || managerFromUserAgent(userAgent),
    force: boolParam(query, 'force'),
  };
}

/** `Warning: 299 - "…"` headers, one per warning, as the real server sends them (kubectl prints `Warning: …`). */
function warningHeaders(warnings: readonly string[] | undefined): Record<string, string> | undefined {
  if (!warnings?.length) return undefined;
  return { warning: [...new Set(warnings)].map((w) => `299 - ${JSON.stringify(w)}`).join(', ') };
}

/**
 * Serves one resource request (see `parseRequestInfo`): finds the kind, checks scope and media types, runs the verb.
 */
export async function handleResource(
  ctx: ApiContext,
  request: Request,
  url: URL,
  info: RequestInfo,
  user: UserInfo,
): Promise<Response> {
  const def = ctx.registry.lookup(info.group, info.version, info.resource);
  if (!def) throw apiErrors.pathNotFound();
  if (!def.namespaced && info.namespace !== undefined) throw apiErrors.pathNotFound();
  if (info.subresource !== undefined && !(def.subresources ?? []).includes(info.subresource as 'status'))
    throw apiErrors.pathNotFound();
  if (info.subresource === 'binding' && info.verb !== 'create') throw apiErrors.methodNotAllowed();
  const accept = request.headers.get('accept');
  const protobuf = !def.custom && hasProtobuf(targetOf(def, info.version, undefined).apiVersion, def.kind);
  const { format, table } = negotiateOutput(accept, { protobuf, table: true, stream: info.verb === 'watch' });
  const query = url.searchParams;
  const target = targetOf(def, info.version, info.namespace);
  const needsNamespace = def.namespaced && info.namespace === undefined;
  const name = info.name;
  /** The request body, as the endpoint's kind (or `kind` of `apiVersion`: Binding, DeleteOptions, TokenRequest). */
  const body = async (kind = def.kind, apiVersion = target.apiVersion): Promise<unknown> =>
    readBody(request, inputFormat(request.headers.get('content-type'), protobuf), { apiVersion, kind });

  /** `…/scale` (Deployments): get, update and patch of the `autoscaling/v1` Scale view. */
  async function scaleRequest(): Promise<Response> {
    if (name === undefined || needsNamespace) throw apiErrors.methodNotAllowed();
    if (info.verb === 'get') return respond(200, scaleOf(getObject(ctx, target, name)), format);
    const scaleKind = ['Scale', 'autoscaling/v1'] as const;
    if (info.verb === 'update') {
      const options = writeOptionsOf(query, request.headers.get('user-agent'), 'UpdateOptions');
      const result = updateScale(ctx, target, name, await body(...scaleKind), options);
      return respond(result.status, result.object, format);
    }
    if (info.verb !== 'patch') throw apiErrors.methodNotAllowed();
    const patchType = patchTypeOf(request.headers.get('content-type') ?? '');
    if (!patchType) throw apiErrors.unsupportedMediaType('the body of the request was in an unknown format');
    const options = writeOptionsOf(query, request.headers.get('user-agent'), 'PatchOptions', patchType);
    const patch = parseBody(await request.text(), 'application/json', 'Scale');
    const result = patchScale(ctx, target, name, patchType, patch, options);
    return respond(result.status, result.object, format);
  }

  if (def.review) {
    if (info.verb !== 'create' || name !== undefined) throw apiErrors.methodNotAllowed();
    return respond(201, answerReview(ctx, def, await body(), user), format);
  }
  if (info.subresource === 'scale') return scaleRequest();
  switch (info.verb) {
    case 'get': {
      if (needsNamespace) throw apiErrors.pathNotFound();
      const obj = getObject(ctx, target, name!);
      if (table)
        return respond(
          200,
          toTable(def, [obj], { resourceVersion: obj.metadata.resourceVersion }, includeObjectOf(query)),
          format,
        );
      return respond(200, obj, format);
    }
    case 'list': {
      await waitUntilFresh(ctx, query, request.signal);
      const list = listObjects(ctx, target, query);
      if (table) return respond(200, toTable(def, list.items, list.metadata, includeObjectOf(query)), format);
      return respond(200, list, format);
    }
    case 'watch':
      return watchObjects(ctx, target, query, { table, format }, name);
    case 'create': {
      if (info.subresource === 'binding' && name !== undefined && !needsNamespace) {
        return respond(201, bindPod(ctx, target, name, await body('Binding'), dryRunOf(query)), format);
      }
      if (info.subresource === 'token' && name !== undefined && !needsNamespace) {
        const tokenRequest = await body('TokenRequest', 'authentication.k8s.io/v1');
        return respond(201, requestToken(ctx, target, name, tokenRequest), format);
      }
      if (name !== undefined || needsNamespace) throw apiErrors.methodNotAllowed();
      const options = writeOptionsOf(query, request.headers.get('user-agent'), 'CreateOptions');
      const result = createObject(ctx, target, await body(), options);
      return respond(result.status, result.object, format, warningHeaders(options.warnings));
    }
    case 'update': {
      if (name === undefined || needsNamespace) throw apiErrors.methodNotAllowed();
      const options = writeOptionsOf(query, request.headers.get('user-agent'), 'UpdateOptions');
      const result = updateObject(ctx, target, name, await body(), info.subresource, options);
      return respond(result.status, result.object, format, warningHeaders(options.warnings));
    }
    case 'patch': {
      if (name === undefined || needsNamespace) throw apiErrors.methodNotAllowed();
      const patchType = patchTypeOf(request.headers.get('content-type') ?? '');
      if (!patchType) {
        throw apiErrors.unsupportedMediaType(
          'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json',
        );
      }
      const options = writeOptionsOf(query, request.headers.get('user-agent'), 'PatchOptions', patchType);
      const text = await request.text();
      const patch = parseBody(text, patchType === 'apply' ? 'application/yaml' : 'application/json', def.kind);
      if (patch === undefined) throw apiErrors.badRequest('the patch body is empty');
      const result = patchObject(ctx, target, name, patchType, patch, info.subresource, options);
      return respond(result.status, result.object, format, warningHeaders(options.warnings));
    }
    case 'delete': {
      if (needsNamespace) throw apiErrors.methodNotAllowed();
      const options = deleteOptionsOf(await body('DeleteOptions'), query);
      return respond(200, deleteObject(ctx, target, name!, options, dryRunOf(query)), format);
    }
    case 'deletecollection': {
      const options = deleteOptionsOf(await body('DeleteOptions'), query);
      return respond(200, deleteCollection(ctx, target, query, options, dryRunOf(query)), format);
    }
  }
}
