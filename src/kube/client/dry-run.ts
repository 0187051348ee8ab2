import type { KubeObject, Status } from '../api/index.ts';
import { resourcePath, type ResourceRef } from './paths.ts';
import {
  KubeClient,
  type CallOptions,
  type DeleteOptions,
  type KubeClientOptions,
  type PatchOptions,
  type PatchType,
  type WriteOptions,
} from './rest.ts';

/** One write the dry run did not send. */
export interface PlannedKubeWrite {
  action: 'create' | 'update' | 'patch' | 'delete';
  resource: string;
  namespace: string | undefined;
  name: string;
  subresource: string | undefined;
  /** The object as it was before the dry run's first write to it (undefined: a create). */
  before: KubeObject | undefined;
  /** The object as it would be now (undefined: deleted). */
  after: KubeObject | undefined;
}

/**
 * A Kubernetes client that reads (gets, lists, watches) from the API server but never writes: a create, update,
 * patch or delete is answered with the object as it would be — a merge patch applied to the object as the server has
 * it (or as an earlier dry write left it) — and recorded as a {@link PlannedKubeWrite}. `raven plan` hands it to the
 * daemon's composition.
 */
export class DryRunKubeClient extends KubeClient {
  readonly #objects = new Map<string, { before: KubeObject | undefined; after: KubeObject | undefined }>();
  readonly #writes: PlannedKubeWrite[] = [];
  readonly #listeners = new Set<(write: PlannedKubeWrite) => void>();

  constructor(options: KubeClientOptions) {
    super(options);
  }

  /** The writes so far, in order. */
  writes(): readonly PlannedKubeWrite[] {
    return this.#writes;
  }

  /** Calls `listener` after each recorded write; returns the function that stops it. */
  onWrite(listener: (write: PlannedKubeWrite) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** The objects written, each with what it was and what it would be. */
  changed(): { resource: string; before: KubeObject | undefined; after: KubeObject | undefined }[] {
    return [...this.#objects].map(([path, o]) => ({ resource: path, ...o }));
  }

  #record(
    action: PlannedKubeWrite['action'],
    ref: ResourceRef,
    namespace: string | undefined,
    name: string,
    subresource: string | undefined,
    after: KubeObject | undefined,
    before: KubeObject | undefined,
  ): void {
    const key = resourcePath(ref, { namespace, name });
    const known = this.#objects.get(key);
    this.#objects.set(key, { before: known ? known.before : before, after });
    const write = { action, resource: ref.resource, namespace, name, subresource, before, after };
    this.#writes.push(write);
    for (const listener of this.#listeners) listener(write);
  }

  /** The object as the dry run has it: an earlier dry write's result, else the server's. */
  async #current<T extends KubeObject>(
    ref: ResourceRef<T>,
    name: string,
    namespace: string | undefined,
    options: CallOptions,
  ): Promise<T | undefined> {
    const known = this.#objects.get(resourcePath(ref, { namespace, name }));
    if (known) return known.after as T | undefined;
    return super.get(ref, name, namespace, options);
  }

  override create<T extends KubeObject>(ref: ResourceRef<T>, obj: T, options: WriteOptions = {}): Promise<T> {
    const namespace = options.namespace ?? obj.metadata.namespace;
    const made = {
      ...obj,
      metadata: { ...obj.metadata, namespace, uid: `planned-${this.#writes.length + 1}`, resourceVersion: '1' },
    } as T;
    this.#record('create', ref, namespace, obj.metadata.name ?? '', undefined, made, undefined);
    return Promise.resolve(made);
  }

  override update<T extends KubeObject>(ref: ResourceRef<T>, obj: T, options: WriteOptions = {}): Promise<T> {
    return this.#put(ref, obj, undefined, options);
  }

  override updateStatus<T extends KubeObject>(ref: ResourceRef<T>, obj: T, options: WriteOptions = {}): Promise<T> {
    return this.#put(ref, obj, 'status', options);
  }

  async #put<T extends KubeObject>(
    ref: ResourceRef<T>,
    obj: T,
    subresource: string | undefined,
    options: WriteOptions,
  ): Promise<T> {
    const namespace = options.namespace ?? obj.metadata.namespace;
    const name = obj.metadata.name ?? '';
    const before = await this.#current(ref, name, namespace, options);
    this.#record('update', ref, namespace, name, subresource, obj, before);
    return obj;
  }

  override async patch<T extends KubeObject>(
    ref: ResourceRef<T>,
    name: string,
    namespace: string | undefined,
    patch: unknown,
    type: PatchType,
    options: PatchOptions = {},
  ): Promise<T> {
    const before = await this.#current(ref, name, namespace, options);
    const body: unknown = typeof patch === 'string' ? JSON.parse(patch) : patch;
    // Merge and strategic patches of plain fields merge alike; Raven sends merge patches only.
    const after = (type === 'merge' || type === 'strategic' ? mergePatch(before, body) : body) as T;
    // A resourceVersion precondition always holds: nothing else writes in a dry run.
    if (before?.metadata.resourceVersion) after.metadata.resourceVersion = before.metadata.resourceVersion;
    this.#record('patch', ref, namespace, name, options.subresource, after, before);
    return after;
  }

  override async delete<T extends KubeObject>(
    ref: ResourceRef<T>,
    name: string,
    namespace?: string,
    options: DeleteOptions = {},
  ): Promise<T | Status> {
    const before = await this.#current(ref, name, namespace, options);
    this.#record('delete', ref, namespace, name, undefined, undefined, before);
    return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' } as Status;
  }
}

/** RFC 7386: `null` deletes a key, objects merge, anything else replaces. Neither input is changed. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return structuredClone(patch);
  const out: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [key, value] of Object.entries(patch as Record<string, unknown>)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}
