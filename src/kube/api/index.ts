/**
 * kube/api: Kubernetes wire types and the pure helpers both sides of the wire share (keys, Status, selectors, name
 * rules). Imports only core.
 */
export * from './types.ts';
export { keyOf, splitKey, apiVersionOf, isPlainObject } from './keys.ts';
export { failureStatus, isStatus } from './status.ts';
