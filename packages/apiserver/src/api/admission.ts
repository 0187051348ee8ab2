import { randomUUID } from 'node:crypto';
import { isPlainObject, type KubeObject, type StatusCause } from '../../../../src/kube/api/index.ts';
import { apiErrors } from '../http/errors.ts';
import { kindValidators, validateObjectMeta, admitCustomResource, immutable } from '../validation/index.ts';
import { checkFields, messageOfKind } from '../protobuf/index.ts';
import { generatedName, present, type ApiContext, type Target } from './context.ts';

/** `fieldValidation`: what to do with fields the kind does not have (Warn, the default, drops them with a warning). */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** How a write decodes its body: the field validation asked for, and where warnings for the response go. */
export interface DecodeOptions {
  /** Warn when absent, as on the real server. */
  fieldValidation?: FieldValidation;
  warnings?: string[];
}

/**
 * Decodes as the real server's JSON decoder does for built-in kinds: a value of the wrong type is a 400 naming the Go
 * field; fields the kind does not have are dropped, with a warning (Warn) or silently (Ignore), or refused (Strict,
 * 400 `strict decoding error`).
 */
function decodeFields(target: Target, obj: KubeObject, options: DecodeOptions): void {
  const message = target.def.custom ? undefined : messageOfKind(target.apiVersion, target.def.kind);
  if (!message) return;
  const check = checkFields(obj, message, {
    prune: options.fieldValidation !== 'Strict',
  });
  const version = target.apiVersion.slice(target.apiVersion.indexOf('/') + 1);
  const kind = target.def.kind;
  const cannot = `${kind} in version "${version}" cannot be handled as a ${kind}`;
  if (check.typeError) throw apiErrors.badRequest(`${cannot}: ${check.typeError}`);
  const unknown = check.unknown.map((path) => `unknown field "${path}"`);
  if (unknown.length === 0) return;
  if (options.fieldValidation === 'Strict')
    throw apiErrors.badRequest(`${cannot}: strict decoding error: ${unknown.join(', ')}`);
  if (options.fieldValidation !== 'Ignore') options.warnings?.push(...unknown);
}

/**
 * Checks a request body is an object of the target's kind and puts it in the target's namespace.
 * Missing `apiVersion`/`kind` are filled from the URL, as the real server's decoder does.
 */
export function decodeObject(target: Target, body: unknown, urlName?: string, options?: DecodeOptions): KubeObject {
  if (!isPlainObject(body))
    throw apiErrors.badRequest(`Object '${target.def.kind}' is missing in '${JSON.stringify(body ?? null)}'`);
  const obj = body as KubeObject;
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
  if (!isPlainObject(obj.metadata)) throw apiErrors.badRequest('metadata must be an object');
  if (obj.kind !== undefined && obj.kind !== target.def.kind) {
    throw apiErrors.badRequest(
      `the kind of the object (${String(obj.kind)}) does not match the expected kind (${target.def.kind})`,
    );
  }
  if (obj.apiVersion !== undefined && obj.apiVersion !== target.apiVersion) {
    throw apiErrors.badRequest(
      `the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${target.apiVersion})`,
    );
  }
  if (options) decodeFields(target, obj, options);
  // Rebuilt so that apiVersion, kind and metadata come first, as in the real server's output.
  const { apiVersion: _v, kind: _k, metadata: meta, ...rest } = obj;
  const decoded: KubeObject = { apiVersion: target.apiVersion, kind: target.def.kind, metadata: meta, ...rest };
  if (target.def.namespaced) {
    if (meta.namespace && meta.namespace !== target.namespace) {
      throw apiErrors.badRequest(
        'the namespace of the provided object does not match the namespace sent on the request',
      );
    }
    meta.namespace = target.namespace;
  } else {
    delete meta.namespace;
  }
  if (urlName !== undefined && meta.name !== undefined && meta.name !== urlName) {
    throw apiErrors.badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${urlName})`);
  }
  if (urlName !== undefined) meta.name = urlName;
  // The real server drops a null creationTimestamp (kubectl sends one) and stamps its own on create.
  if (meta.creationTimestamp === null) delete meta.creationTimestamp;
  return target.def.storedAs ? target.def.storedAs.toStorage(decoded) : decoded;
}

/**
 * Checks a server-side apply body (400 as upstream): an object of exactly the target's kind and version
 * (`invalid object type: /v1, Kind=Pod`), without managedFields, naming the object of the URL if it names one.
 */
export function decodeApplyConfig(target: Target, body: unknown, urlName: string): KubeObject {
  if (!isPlainObject(body)) {
    const got = Array.isArray(body) ? 'array' : body === null ? 'null' : typeof body;
    throw apiErrors.badRequest(
      `error decoding YAML: json: cannot unmarshal ${got} into Go value of type map[string]interface {}`,
    );
  }
  const apiVersion = typeof body.apiVersion === 'string' ? body.apiVersion : '';
  const kind = typeof body.kind === 'string' ? body.kind : '';
  if (apiVersion !== target.apiVersion || kind !== target.def.kind) {
    const slash = apiVersion.indexOf('/');
    throw apiErrors.badRequest(
      `invalid object type: ${slash < 0 ? '' : apiVersion.slice(0, slash)}/${apiVersion.slice(slash + 1)}, Kind=${kind}`,
    );
  }
  if (body.metadata === undefined || body.metadata === null) body.metadata = {};
  if (!isPlainObject(body.metadata)) throw apiErrors.badRequest('metadata must be an object');
  const meta = body.metadata as KubeObject['metadata'];
  if (meta.managedFields !== undefined && meta.managedFields !== null)
    throw apiErrors.badRequest('metadata.managedFields must be nil');
  delete meta.managedFields;
  if (meta.name !== undefined && meta.name !== urlName) {
    throw apiErrors.badRequest(
      `the name of the object (${String(meta.name)}) does not match the name on the URL (${urlName})`,
    );
  }
  return body as KubeObject;
}

/** Sets what the server owns on a new object: name from generateName, uid, timestamps, generation. */
export function stampNew(ctx: ApiContext, target: Target, obj: KubeObject): void {
  const meta = obj.metadata;
  if (!meta.name && meta.generateName) meta.name = generatedName(meta.generateName);
  meta.uid = randomUUID();
  meta.creationTimestamp = ctx.now();
  delete meta.resourceVersion;
  delete meta.deletionTimestamp;
  delete meta.deletionGracePeriodSeconds;
  if (tracksGeneration(target)) meta.generation = 1;
  else delete meta.generation;
}

/** Kinds whose `metadata.generation` counts spec changes. */
export function tracksGeneration(target: Target): boolean {
  return target.def.tracksGeneration === true;
}

/**
 * Validates a defaulted object (metadata and kind rules; custom resources against their schema); 422 with every cause.
 */
export function admit(ctx: ApiContext, target: Target, obj: KubeObject, old: KubeObject | undefined): void {
  const causes: StatusCause[] = validateObjectMeta(obj.metadata, {
    namespaced: target.def.namespaced,
    nameRule: target.def.nameRule ?? 'subdomain',
  });
  if (target.def.custom) {
    const version = target.apiVersion.slice(target.apiVersion.indexOf('/') + 1);
    causes.push(...admitCustomResource(obj, target.def.schemas?.[version]));
  }
  const validator = kindValidators[`${target.def.group}/${target.def.kind}`];
  // A view of another kind's table is validated in its own version's form, as the real server does per request version.
  if (validator)
    causes.push(
      ...(target.def.storedAs
        ? validator(present(obj, target.apiVersion), old && present(old, target.apiVersion))
        : validator(obj, old)),
    );
  // ValidateObjectMetaUpdate: the uid names the object for its whole life (owners, finalizers, Raven's tags).
  if (old) causes.push(...immutable('metadata.uid', obj.metadata.uid, old.metadata.uid));
  if (old?.metadata.deletionTimestamp) {
    const before = new Set(old.metadata.finalizers ?? []);
    if ((obj.metadata.finalizers ?? []).some((f) => !before.has(f))) {
      causes.push({
        reason: 'FieldValueForbidden',
        field: 'metadata.finalizers',
        message: 'Forbidden: no new finalizers can be added if the object is being deleted',
      });
    }
  }
  if (causes.length > 0)
    throw apiErrors.invalid(target.def, obj.metadata.name ?? obj.metadata.generateName ?? '', causes);
}

/** Namespaced writes need an existing namespace that is not being deleted (404 / 403 like the real server). */
export function checkNamespaceAcceptsCreate(ctx: ApiContext, target: Target, name: string): void {
  if (!target.def.namespaced || target.namespace === undefined) return;
  const ns = ctx.store.get('/namespaces', '', target.namespace);
  if (!ns) throw apiErrors.notFound({ group: '', resource: 'namespaces' }, target.namespace);
  if (ns.metadata.deletionTimestamp) {
    const message = `unable to create new content in namespace ${target.namespace} because it is being terminated`;
    throw apiErrors.forbidden(target.def, name, message, [
      { reason: 'NamespaceTerminating', message, field: 'metadata.namespace' },
    ]);
  }
}
