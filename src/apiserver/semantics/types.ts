import type { KubeObject } from '../../kube/api/index.ts';

/**
 * What the server does for a kind beyond storing it (the real server's registry "strategy"): defaulting, and the
 * side effects of create/update/delete such as allocating a Service's cluster IP. Hooks run synchronously inside
 * the write, after validation, so a failure leaves nothing behind.
 */
export interface KindHooks {
  /** Fills defaults on create and update (the real server's defaulting). Mutates `obj`. */
  defaults?(obj: KubeObject): void;
  /** Fields the server sets on create only (e.g. a Pod's initial status). Mutates `obj`. */
  initialize?(obj: KubeObject): void;
  /** Takes what a new object needs (IPs, ports); throws ApiError when it cannot. Undo with `release`. */
  allocate?(obj: KubeObject, old: KubeObject | undefined): void;
  /** Gives back what `allocate` took for `obj` and `old` no longer needs (or, after a delete, everything). */
  release?(obj: KubeObject | undefined, old: KubeObject): void;
  /** Runs after the object is committed (e.g. a CRD starts serving its resource). */
  committed?(obj: KubeObject, old: KubeObject | undefined): void;
  /** Runs after the object is removed. */
  removed?(obj: KubeObject): void;
}
