/**
 * cni/spec: the CNI wire format (network configuration, environment, results, errors) as types and zod schemas.
 * Imports only core, so the plugin and whatever plays the container runtime share one reading of the spec.
 */
export * from './types.ts';
export { CniError } from './errors.ts';
export { parseCniArgs, readCniEnvironment, type CniEnvironment } from './env.ts';
