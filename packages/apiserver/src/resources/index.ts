/** resources: the declarative description of every served kind, and the registry that serves and discovers them. */
export { ResourceRegistry, type GroupVersion } from './registry.ts';
export { builtinResources } from './builtin.ts';
export { storageKeyOf, type ResourceDef, type PrinterColumn, type StoredAs } from './types.ts';
export { conversions } from './events-v1.ts';
