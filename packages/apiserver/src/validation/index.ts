/**
 * validation: the API server's 422 rules, as pure functions from objects to `StatusCause`s whose reason, field path
 * and message match the real kube-apiserver (`spec.containers[0].image: Required value`, …). Metadata rules apply to
 * every kind ({@link validateObjectMeta}); {@link kindValidators} holds the per-kind rules, keyed `group/Kind`
 * (core group as `/Pod`). Validators assume defaulting already ran, but accept absent defaulted fields. They never
 * throw on malformed JSON: a wrong-typed field is reported or treated as absent.
 */
import type { KindValidator } from './field.ts';
import { validateBinding, validateDeployment, validateRole } from './apps-rbac.ts';
import { validateConfigMap, validateSecret } from './config.ts';
import { validateCustomResourceDefinition } from './crd.ts';
import { validateCoreEvent, validateEventsV1Event, validateLease } from './events-leases.ts';
import { validateEndpointSlice, validateNetworkPolicy } from './network.ts';
import { validatePod } from './pod.ts';
import { validateService } from './service.ts';
import { validateResourceQuota } from './quota.ts';

export {
  type FieldCause,
  type FieldReason,
  type KindValidator,
  required,
  invalid,
  notSupported,
  duplicate,
  forbidden,
  tooLong,
  tooMany,
  immutable,
  formatValue,
  semanticEqual,
} from './field.ts';
export {
  type NameRule,
  type ObjectMetaOptions,
  TOTAL_ANNOTATION_SIZE_LIMIT,
  nameRuleErrors,
  validateObjectMeta,
  validateLabels,
  validateAnnotations,
  validateLabelSelector,
} from './meta.ts';
export { validatePod, validatePodSpec } from './pod.ts';
export { POD_UPDATE_FORBIDDEN_MESSAGE } from './pod-update.ts';
export { validateService } from './service.ts';
export { parseQuantity, validateResourceQuota } from './quota.ts';
export { validateConfigMap, validateSecret, MAX_CONFIG_SIZE } from './config.ts';
export { validateEndpointSlice, validateNetworkPolicy } from './network.ts';
export { validateLease, validateCoreEvent, validateEventsV1Event } from './events-leases.ts';
export { validateCustomResourceDefinition } from './crd.ts';
export { admitCustomResource, type StructuralSchema } from './openapi.ts';

const noRules: KindValidator = () => [];

/**
 * Per-kind rules keyed `group/Kind` (`/Pod` for the core group). Kinds with nothing beyond metadata (Namespace,
 * Node) map to a validator that finds nothing, so a missing key means "unknown kind", not "no rules".
 * @example kindValidators['/Pod']?.(pod, storedPod)
 */
export const kindValidators: Readonly<Record<string, KindValidator>> = Object.freeze({
  '/Pod': validatePod,
  '/Service': validateService,
  '/Namespace': noRules,
  '/Node': noRules,
  '/ConfigMap': validateConfigMap,
  '/Secret': validateSecret,
  '/ResourceQuota': validateResourceQuota,
  '/Event': validateCoreEvent,
  'events.k8s.io/Event': validateEventsV1Event,
  'discovery.k8s.io/EndpointSlice': validateEndpointSlice,
  'coordination.k8s.io/Lease': validateLease,
  'networking.k8s.io/NetworkPolicy': validateNetworkPolicy,
  'apiextensions.k8s.io/CustomResourceDefinition': validateCustomResourceDefinition,
  'apps/Deployment': validateDeployment,
  'rbac.authorization.k8s.io/Role': validateRole,
  'rbac.authorization.k8s.io/ClusterRole': validateRole,
  'rbac.authorization.k8s.io/RoleBinding': validateBinding,
  'rbac.authorization.k8s.io/ClusterRoleBinding': validateBinding,
});
