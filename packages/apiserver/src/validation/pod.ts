/**
 * Pods (core/v1), after pkg/apis/core/validation ValidatePodCreate/ValidatePodUpdate: containers and their ports,
 * restartPolicy, and on update the famous "pod updates may not change fields other than …".
 */
import {
  validateDns1123Label,
  validatePortName,
  validatePortNumber,
  type KubeObject,
} from '../../../../src/kube/api/index.ts';
import {
  duplicate,
  invalid,
  invalidEach,
  list,
  notSupported,
  num,
  record,
  required,
  str,
  type FieldCause,
} from './field.ts';
import { validatePodSpecUpdate } from './pod-update.ts';

/** Protocols a container or service port may use (sets.List order: sorted). */
export const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'] as const;
const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];

function validateContainerPorts(ports: unknown, path: string): FieldCause[] {
  const causes: FieldCause[] = [];
  const names = new Set<string>();
  list(ports).forEach((raw, i) => {
    const port = record(raw) ?? {};
    const at = `${path}[${i}]`;
    const name = str(port.name) ?? '';
    if (name) {
      const errs = validatePortName(name);
      if (errs.length > 0) causes.push(...invalidEach(`${at}.name`, name, errs));
      else if (names.has(name)) causes.push(duplicate(`${at}.name`, name));
      else names.add(name);
    }
    const containerPort = port.containerPort;
    if (containerPort === undefined || containerPort === null || containerPort === 0)
      causes.push(required(`${at}.containerPort`));
    else
      causes.push(...invalidEach(`${at}.containerPort`, containerPort, validatePortNumber(num(containerPort) ?? NaN)));
    if (port.hostPort !== undefined && port.hostPort !== null && port.hostPort !== 0) {
      causes.push(...invalidEach(`${at}.hostPort`, port.hostPort, validatePortNumber(num(port.hostPort) ?? NaN)));
    }
    // An absent protocol is defaulted to TCP before validation; an explicit empty one is an error.
    if (port.protocol === '') causes.push(required(`${at}.protocol`));
    else if (port.protocol !== undefined && !(PORT_PROTOCOLS as readonly unknown[]).includes(port.protocol)) {
      causes.push(notSupported(`${at}.protocol`, port.protocol, PORT_PROTOCOLS));
    }
  });
  return causes;
}

/** One container list; `names` is shared by regular and init containers, which must not collide either. */
function validateContainers(containers: unknown, path: string, names: Set<string>): FieldCause[] {
  const causes: FieldCause[] = [];
  list(containers).forEach((raw, i) => {
    const ctr = record(raw) ?? {};
    const at = `${path}[${i}]`;
    const name = str(ctr.name) ?? '';
    if (!name) causes.push(required(`${at}.name`));
    else {
      causes.push(...invalidEach(`${at}.name`, name, validateDns1123Label(name)));
      if (names.has(name)) causes.push(duplicate(`${at}.name`, name));
      else names.add(name);
    }
    const image = str(ctr.image) ?? '';
    if (!image) causes.push(required(`${at}.image`));
    else if (image.trim() !== image)
      causes.push(invalid(`${at}.image`, image, 'must not have leading or trailing whitespace'));
    causes.push(...validateContainerPorts(ctr.ports, `${at}.ports`));
  });
  return causes;
}

/** The rules of a pod spec that apply on create and on every update. */
export function validatePodSpec(specValue: unknown, path = 'spec'): FieldCause[] {
  const spec = record(specValue) ?? {};
  const causes: FieldCause[] = [];
  const names = new Set<string>();
  if (list(spec.containers).length === 0) causes.push(required(`${path}.containers`));
  causes.push(...validateContainers(spec.containers, `${path}.containers`, names));
  // Upstream checks init containers second, so a clash is reported on the init container.
  causes.push(...validateContainers(spec.initContainers, `${path}.initContainers`, names));
  const restartPolicy = spec.restartPolicy;
  if (restartPolicy === '') causes.push(required(`${path}.restartPolicy`));
  else if (restartPolicy !== undefined && !RESTART_POLICIES.includes(restartPolicy as string)) {
    causes.push(notSupported(`${path}.restartPolicy`, restartPolicy, RESTART_POLICIES));
  }
  const deadline = spec.activeDeadlineSeconds;
  if (deadline !== undefined && deadline !== null) {
    const value = num(deadline);
    if (value === undefined || !Number.isInteger(value) || value < 1 || value > 2147483647) {
      causes.push(invalid(`${path}.activeDeadlineSeconds`, deadline, 'must be between 1 and 2147483647, inclusive'));
    }
  }
  return causes;
}

/**
 * Pod create and update. On update (`old` given) the spec is also checked for changes other than the mutable ones;
 * call it only for writes to the main resource (status writes may change anything in status).
 */
export function validatePod(obj: KubeObject, old?: KubeObject): FieldCause[] {
  const causes = validatePodSpec(obj.spec);
  if (old) causes.push(...validatePodSpecUpdate(record(obj.spec) ?? {}, record(old.spec) ?? {}));
  return causes;
}
