import type { KubeObject } from '../../../../src/kube/api/index.ts';

/**
 * What the server does for a kind beyond storing it (the real server's registry "strategy"): defaulting, and the
 * side effects of create/update/delete such as allocating a Service's cluster IP. Hooks run synchronously inside
 * the write, after validation, so a failure leaves nothing behind. `T` is the kind's type: hooks are registered by
 * table, and a table holds one kind (validated before the hooks run).
 */
export interface KindHooks<T extends KubeObject = KubeObject> {
  /** Fills defaults on create and update (the real server's defaulting). Mutates `obj`. */
  defaults?(obj: T): void;
  /** Fields the server sets on create only (e.g. a Pod's initial status). Mutates `obj`. */
  initialize?(obj: T): void;
  /** Takes what a new object needs (IPs, ports); throws ApiError when it cannot. Undo with `release`. */
  allocate?(obj: T, old: T | undefined): void;
  /** Gives back what `allocate` took for `obj` and `old` no longer needs (or, after a delete, everything). */
  release?(obj: T | undefined, old: T): void;
  /** Runs after the object is committed (e.g. a CRD starts serving its resource). */
  committed?(obj: T, old: T | undefined): void;
  /** Runs after the object is removed. */
  removed?(obj: T): void;
}
