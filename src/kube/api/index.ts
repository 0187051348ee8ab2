/**
 * kube/api: Kubernetes wire types and the pure helpers both sides of the wire share (keys, Status, selectors, name
 * rules). Imports only core.
 *
 * Contract:
 * - One definition per kind, used by the reconcilers, the cluster simulator and the embedded API server alike:
 *   Namespace, Pod, Service, Endpoints, Node, Event (`core.ts`), EndpointSlice (`discovery.ts`), Lease
 *   (`coordination.ts`), NetworkPolicy (`networking.ts`) and the meta types (`meta.ts`).
 * - Raven's own pod contract with the CNI plugin: the VIF annotation (`vif.ts`).
 * - Fields are optional as on the wire; code that needs one narrows with a type guard, never a cast.
 */
export * from './meta.ts';
export * from './core.ts';
export * from './discovery.ts';
export * from './coordination.ts';
export * from './apps.ts';
export * from './networking.ts';
export * from './vif.ts';
export * from './vif-signature.ts';
export * from './types.ts';
export { keyOf, splitKey, apiVersionOf, isPlainObject } from './keys.ts';
export { failureStatus, isStatus } from './status.ts';
export {
  SelectorError,
  type LabelOperator,
  type LabelRequirement,
  type LabelSelectorExpr,
  everythingSelector,
  nothingSelector,
  isEverything,
  newLabelRequirement,
  labelSelectorOf,
  selectorFromLabelSelector,
  selectorFromMap,
  matchesLabels,
  formatLabelSelector,
  goQuote,
  goStringSlice,
} from './selectors.ts';
export { parseLabelSelector } from './label-parser.ts';
export {
  type FieldRequirement,
  type FieldSelectorExpr,
  parseFieldSelector,
  matchesFields,
  fieldSelectorPaths,
  fieldSelectorExactMatch,
  formatFieldSelector,
} from './field-selector.ts';
export {
  validateDns1123Label,
  validateDns1123Subdomain,
  validateDns1035Label,
  validateQualifiedName,
  validateLabelValue,
  validateConfigMapKey,
  validatePortName,
  validatePortNumber,
  maxLenError,
  inclusiveRangeError,
  regexError,
  byteLength,
  DNS1123_LABEL_MAX_LENGTH,
  DNS1123_SUBDOMAIN_MAX_LENGTH,
} from './names.ts';
