/** resources: the declarative description of every served kind, and the registry that serves and discovers them. */
export { ResourceRegistry, type GroupVersion } from './registry.ts';
export { builtinResources } from './builtin.ts';
export { storageKeyOf, type ResourceDef, type PrinterColumn } from './types.ts';
