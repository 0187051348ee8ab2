/**
 * Leases (coordination.k8s.io/v1) and Events (core/v1 and events.k8s.io/v1). Event rules follow
 * ValidateEventCreate: core/v1 keeps the lenient legacy rules, events.k8s.io/v1 adds the strict ones. Field names
 * in messages are upstream's internal ones (`involvedObject`, `message`, `firstTimestamp`…) even for
 * events.k8s.io objects, because that is what the real server prints.
 */
import { validateQualifiedName, type KubeObject } from '../../../../src/kube/api/index.ts';
import { invalid, invalidEach, isZero, num, record, required, str, type FieldCause } from './field.ts';

const REPORTING_INSTANCE_LIMIT = 128;
const ACTION_LIMIT = 128;
const REASON_LIMIT = 128;
const NOTE_LIMIT = 1024;

/** Lease create and update: a positive duration and non-negative transitions, when set. */
export function validateLease(obj: KubeObject): FieldCause[] {
  const spec = record(obj.spec) ?? {};
  const causes: FieldCause[] = [];
  const duration = spec.leaseDurationSeconds;
  if (duration !== undefined && duration !== null && !((num(duration) ?? NaN) > 0)) {
    causes.push(invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
  }
  const transitions = spec.leaseTransitions;
  if (transitions !== undefined && transitions !== null && !((num(transitions) ?? NaN) >= 0)) {
    causes.push(invalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
  }
  return causes;
}

/** The two API shapes of one event, read into upstream's internal names. */
interface EventView {
  namespace: string;
  involvedNamespace: string;
  eventTime: unknown;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  message: string;
}

function lengthCause(field: string, value: string, limit: number): FieldCause[] {
  return value.length > limit ? [invalid(field, '', `can have at most ${limit} characters`)] : [];
}

/** legacyValidateEvent: the rules every event passes, whichever API wrote it. */
function legacyEventCauses(e: EventView, reportingField: string): FieldCause[] {
  const causes: FieldCause[] = [];
  const mismatch = invalid('involvedObject.namespace', e.involvedNamespace, 'does not match event.namespace');
  if (isZero(e.eventTime)) {
    // Old-style events: the namespaces agree, or a cluster-scoped object's event sits in "default" (or nowhere).
    const ok = e.involvedNamespace
      ? e.namespace === e.involvedNamespace
      : e.namespace === '' || e.namespace === 'default';
    if (!ok) causes.push(mismatch);
    return causes;
  }
  if (!e.involvedNamespace && e.namespace !== 'default' && e.namespace !== 'kube-system') causes.push(mismatch);
  if (!e.reportingController) causes.push(required(reportingField));
  causes.push(...invalidEach(reportingField, e.reportingController, validateQualifiedName(e.reportingController)));
  if (!e.reportingInstance) causes.push(required('reportingInstance'));
  causes.push(...lengthCause('reportingInstance', e.reportingInstance, REPORTING_INSTANCE_LIMIT));
  if (!e.action) causes.push(required('action'));
  causes.push(...lengthCause('action', e.action, ACTION_LIMIT));
  if (!e.reason) causes.push(required('reason'));
  causes.push(...lengthCause('reason', e.reason, REASON_LIMIT));
  causes.push(...lengthCause('message', e.message, NOTE_LIMIT));
  return causes;
}

/** core/v1 Event: the involved object's namespace must match the event's (legacy rules). */
export function validateCoreEvent(obj: KubeObject): FieldCause[] {
  const involved = record(obj.involvedObject) ?? {};
  return legacyEventCauses(
    {
      namespace: str(obj.metadata.namespace) ?? '',
      involvedNamespace: str(involved.namespace) ?? '',
      eventTime: obj.eventTime,
      reportingController: str(obj.reportingComponent) ?? '',
      reportingInstance: str(obj.reportingInstance) ?? '',
      action: str(obj.action) ?? '',
      reason: str(obj.reason) ?? '',
      message: str(obj.message) ?? '',
    },
    'reportingComponent',
  );
}

/** events.k8s.io/v1 Event: eventTime, type Normal/Warning, reporting fields, and no deprecated fields. */
export function validateEventsV1Event(obj: KubeObject): FieldCause[] {
  const regarding = record(obj.regarding) ?? {};
  const causes = legacyEventCauses(
    {
      namespace: str(obj.metadata.namespace) ?? '',
      involvedNamespace: str(regarding.namespace) ?? '',
      eventTime: obj.eventTime,
      reportingController: str(obj.reportingController) ?? '',
      reportingInstance: str(obj.reportingInstance) ?? '',
      action: str(obj.action) ?? '',
      reason: str(obj.reason) ?? '',
      message: str(obj.note) ?? '',
    },
    'reportingController',
  );
  if (isZero(obj.eventTime)) causes.push(required('eventTime'));
  if (obj.type !== 'Normal' && obj.type !== 'Warning') {
    causes.push(invalid('type', '', `has invalid value: ${str(obj.type) ?? ''}`));
  }
  for (const [field, upstream] of [
    ['deprecatedFirstTimestamp', 'firstTimestamp'],
    ['deprecatedLastTimestamp', 'lastTimestamp'],
    ['deprecatedCount', 'count'],
    ['deprecatedSource', 'source'],
  ] as const) {
    if (!isZero(obj[field])) causes.push(invalid(upstream, '', 'needs to be unset'));
  }
  return causes;
}
