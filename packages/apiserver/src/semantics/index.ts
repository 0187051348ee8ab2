/**
 * semantics: what the server does per kind beyond storing objects (defaults, allocations, CRDs serving resources,
 * namespace termination).
 */
export type { KindHooks } from './types.ts';
export { podHooks } from './pods.ts';
export { deploymentHooks } from './deployments.ts';
export { namespaceHooks } from './namespaces.ts';
export { secretHooks } from './secrets.ts';
export { serviceHooks } from './services.ts';
export { crdHooks, resourceDefOfCrd } from './crds.ts';
