import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { deepFreeze } from '../../../../src/core/index.ts';
import type { KubeObject } from '../../../../src/kube/api/index.ts';
import { validateCoreEvent, validateEventsV1Event, validateLease } from './events-leases.ts';

const object = (
  apiVersion: string,
  kind: string,
  namespace: string | undefined,
  body: Record<string, unknown>,
): KubeObject =>
  deepFreeze({ apiVersion, kind, metadata: { name: 'x', ...(namespace === undefined ? {} : { namespace }) }, ...body });

describe('validateLease', () => {
  const lease = (spec: Record<string, unknown>): KubeObject =>
    object('coordination.k8s.io/v1', 'Lease', 'kube-system', { spec });
  it('accepts a leader-election lease and an empty one', () => {
    assert.deepEqual(
      validateLease(
        lease({
          holderIdentity: 'raven-0',
          leaseDurationSeconds: 15,
          leaseTransitions: 0,
          renewTime: '2024-01-01T00:00:00.000000Z',
        }),
      ),
      [],
    );
    assert.deepEqual(validateLease(lease({})), []);
  });
  it('rejects a non-positive duration and negative transitions', () => {
    assert.deepEqual(validateLease(lease({ leaseDurationSeconds: 0, leaseTransitions: -1 })), [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.leaseDurationSeconds',
        message: 'Invalid value: 0: must be greater than 0',
      },
      {
        reason: 'FieldValueInvalid',
        field: 'spec.leaseTransitions',
        message: 'Invalid value: -1: must be greater than or equal to 0',
      },
    ]);
  });
});

describe('validateCoreEvent', () => {
  const event = (namespace: string, body: Record<string, unknown>): KubeObject =>
    object('v1', 'Event', namespace, body);
  it('accepts the events controllers write', () => {
    assert.deepEqual(
      validateCoreEvent(
        event('default', {
          involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' },
          reason: 'Started',
          type: 'Normal',
        }),
      ),
      [],
    );
    // A cluster-scoped object's event lives in "default".
    assert.deepEqual(validateCoreEvent(event('default', { involvedObject: { kind: 'Node', name: 'node-1' } })), []);
  });
  it('rejects an involved object in another namespace', () => {
    const mismatch = (value: string) => ({
      reason: 'FieldValueInvalid',
      field: 'involvedObject.namespace',
      message: `Invalid value: "${value}": does not match event.namespace`,
    });
    assert.deepEqual(
      validateCoreEvent(event('default', { involvedObject: { kind: 'Pod', namespace: 'other', name: 'web' } })),
      [mismatch('other')],
    );
    assert.deepEqual(validateCoreEvent(event('team-a', { involvedObject: { kind: 'Node', name: 'node-1' } })), [
      mismatch(''),
    ]);
  });
  it('checks the reporting fields of new-style events (eventTime set)', () => {
    assert.deepEqual(
      validateCoreEvent(
        event('default', {
          eventTime: '2024-01-01T00:00:00.000000Z',
          involvedObject: { namespace: 'default' },
          reportingComponent: 'raven.io/controller',
          reportingInstance: 'raven-0',
          action: 'Reconcile',
          reason: 'Synced',
        }),
      ),
      [],
    );
    assert.deepEqual(
      validateCoreEvent(
        event('default', {
          eventTime: '2024-01-01T00:00:00.000000Z',
          involvedObject: { namespace: 'default' },
          reason: 'r'.repeat(129),
        }),
      ),
      [
        { reason: 'FieldValueRequired', field: 'reportingComponent', message: 'Required value' },
        {
          reason: 'FieldValueInvalid',
          field: 'reportingComponent',
          message: `Invalid value: "": name part must be non-empty`,
        },
        {
          reason: 'FieldValueInvalid',
          field: 'reportingComponent',
          message:
            "Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        },
        { reason: 'FieldValueRequired', field: 'reportingInstance', message: 'Required value' },
        { reason: 'FieldValueRequired', field: 'action', message: 'Required value' },
        { reason: 'FieldValueInvalid', field: 'reason', message: 'Invalid value: "": can have at most 128 characters' },
      ],
    );
  });
});

describe('validateEventsV1Event', () => {
  const base = {
    eventTime: '2024-01-01T00:00:00.000000Z',
    regarding: { kind: 'Service', namespace: 'default', name: 'web' },
    reportingController: 'raven.io/service-controller',
    reportingInstance: 'raven-0',
    action: 'EnsureLoadBalancer',
    reason: 'Provisioned',
    type: 'Normal',
    note: 'load balancer ready',
  };
  const event = (body: Record<string, unknown>): KubeObject => object('events.k8s.io/v1', 'Event', 'default', body);

  it('accepts a complete event', () => {
    assert.deepEqual(validateEventsV1Event(event(base)), []);
    assert.deepEqual(validateEventsV1Event(event({ ...base, type: 'Warning', note: 'n'.repeat(1024) })), []);
  });

  it('requires eventTime and a known type, and no deprecated fields', () => {
    const { eventTime: _eventTime, ...noTime } = base;
    assert.deepEqual(
      validateEventsV1Event(
        event({ ...noTime, type: 'Info', deprecatedCount: 2, deprecatedSource: { component: 'x' } }),
      ),
      [
        { reason: 'FieldValueRequired', field: 'eventTime', message: 'Required value' },
        { reason: 'FieldValueInvalid', field: 'type', message: 'Invalid value: "": has invalid value: Info' },
        { reason: 'FieldValueInvalid', field: 'count', message: 'Invalid value: "": needs to be unset' },
        { reason: 'FieldValueInvalid', field: 'source', message: 'Invalid value: "": needs to be unset' },
      ],
    );
  });

  it('checks the note length and the regarding namespace as upstream does', () => {
    assert.deepEqual(validateEventsV1Event(event({ ...base, note: 'n'.repeat(1025) })), [
      { reason: 'FieldValueInvalid', field: 'message', message: 'Invalid value: "": can have at most 1024 characters' },
    ]);
    // With eventTime set, upstream only objects to a cluster-scoped subject outside default/kube-system …
    const inTeam = (regarding: Record<string, unknown>): KubeObject =>
      object('events.k8s.io/v1', 'Event', 'team-a', { ...base, regarding });
    assert.deepEqual(validateEventsV1Event(inTeam({ kind: 'Node', name: 'node-1' })), [
      {
        reason: 'FieldValueInvalid',
        field: 'involvedObject.namespace',
        message: 'Invalid value: "": does not match event.namespace',
      },
    ]);
    // … and lets a namespaced subject sit in another namespace.
    assert.deepEqual(validateEventsV1Event(inTeam({ kind: 'Pod', namespace: 'other', name: 'p' })), []);
  });
});
