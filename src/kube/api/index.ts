/**
 * kube/api: Kubernetes wire types and the pure helpers both sides of the wire share (keys, Status, selectors, name
 * rules). Imports only core.
 */
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
