import assert from 'node:assert/strict';
import { describe, it } from '../../../../test/support/node-test.ts';
import { ApplyConflictError } from './errors.ts';
import { decodeManaged, encodeManaged, type Managers } from './managed.ts';
import { builtinType } from './schema.ts';
import { applyConfiguration, recordUpdate, type Writer } from './track.ts';

type Obj = Record<string, unknown>;
const configMap = builtinType('', 'ConfigMap');
const service = builtinType('', 'Service');
const pod = builtinType('', 'Pod');

function writer(manager: string, now = '2024-01-01T00:00:00Z'): Writer {
  return { manager, apiVersion: 'v1', now: () => now };
}

/** A small cluster of one object: applies and updates in sequence, as the server runs them. */
class Subject {
  object: Obj = {};
  managers: Managers = new Map();
  constructor(readonly type = configMap) {}

  apply(manager: string, config: Obj, force = false, now?: string): boolean {
    const result = applyConfiguration({
      live: this.object,
      config: structuredClone(config),
      managers: this.managers,
      writer: writer(manager, now),
      force,
      type: this.type,
    });
    this.object = result.object;
    this.managers = result.managers;
    return result.changed;
  }

  update(manager: string, next: Obj, now?: string): void {
    this.managers = recordUpdate(this.object, next, this.managers, writer(manager, now), this.type);
    this.object = next;
  }

  /** The entries as served: manager/operation → fieldsV1. */
  fields(): Record<string, unknown> {
    return Object.fromEntries(
      (encodeManaged(this.managers) ?? []).map((e) => [`${e.manager}/${e.operation}`, e.fieldsV1]),
    );
  }
}

const cm = (data: Obj): Obj => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' }, data });

describe('applyConfiguration', () => {
  it('creates, then owns exactly what it applied', () => {
    const s = new Subject();
    assert.equal(s.apply('a', cm({ k: '1' })), true);
    assert.deepEqual(s.object, cm({ k: '1' }));
    assert.deepEqual(s.fields(), { 'a/Apply': { 'f:data': { 'f:k': {} } } });
  });

  it('re-applying the same configuration changes nothing', () => {
    const s = new Subject();
    s.apply('a', cm({ k: '1' }), false, '2024-01-01T00:00:00Z');
    const before = s.managers;
    assert.equal(s.apply('a', cm({ k: '1' }), false, '2024-02-02T00:00:00Z'), false);
    assert.deepEqual(encodeManaged(s.managers), encodeManaged(before));
  });

  it('conflicts on a field another manager owns with a different value; force takes it over', () => {
    const s = new Subject();
    s.apply('a', cm({ k: '1', j: '2' }));
    assert.throws(
      () => s.apply('b', cm({ k: 'other' })),
      (err: unknown) => {
        assert.ok(err instanceof ApplyConflictError);
        assert.equal(err.message, 'Apply failed with 1 conflict: conflict with "a": .data.k');
        assert.deepEqual(err.causes, [
          { reason: 'FieldManagerConflict', message: 'conflict with "a"', field: '.data.k' },
        ]);
        return true;
      },
    );
    s.apply('b', cm({ k: 'other' }), true);
    assert.deepEqual(s.object.data, { k: 'other', j: '2' });
    assert.deepEqual(s.fields(), { 'a/Apply': { 'f:data': { 'f:j': {} } }, 'b/Apply': { 'f:data': { 'f:k': {} } } });
  });

  it('shares fields applied with equal values', () => {
    const s = new Subject();
    s.apply('a', cm({ k: '1' }));
    s.apply('b', cm({ k: '1' }));
    assert.deepEqual(s.fields(), { 'a/Apply': { 'f:data': { 'f:k': {} } }, 'b/Apply': { 'f:data': { 'f:k': {} } } });
    // Still shared, so a dropping it keeps it, owned by b alone.
    s.apply('a', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } });
    assert.deepEqual(s.object.data, { k: '1' });
    assert.deepEqual(s.fields(), { 'b/Apply': { 'f:data': { 'f:k': {} } } });
  });

  it('removes fields it applied before and no longer applies', () => {
    const s = new Subject();
    s.apply('a', cm({ k: '1', j: '2' }));
    s.apply('a', cm({ k: '1' }));
    assert.deepEqual(s.object.data, { k: '1' });
  });

  it('conflicts with Update managers, naming them with their version', () => {
    const s = new Subject();
    s.update('kubectl-edit', cm({ k: '1' }));
    assert.throws(() => s.apply('a', cm({ k: '2' })), {
      message: 'Apply failed with 1 conflict: conflict with "kubectl-edit" using v1: .data.k',
    });
  });

  it('lists several conflicts by manager', () => {
    const s = new Subject();
    s.update('u', cm({ a: '1', b: '1' }));
    s.apply('v', cm({ c: '1' }));
    assert.throws(
      () => s.apply('w', cm({ a: '2', b: '2', c: '2' })),
      (err: unknown) => {
        assert.ok(err instanceof ApplyConflictError);
        assert.equal(
          err.message,
          'Apply failed with 3 conflicts: conflicts with "u" using v1:\n- .data.a\n- .data.b\nconflicts with "v":\n- .data.c',
        );
        assert.equal(err.causes.length, 3);
        return true;
      },
    );
  });

  it('merges associative lists by key, and conflicts per item field', () => {
    const s = new Subject(service);
    const svc = (ports: Obj[]): Obj => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: { ports },
    });
    s.update(
      'kubectl-client-side-apply',
      svc([
        { port: 80, protocol: 'TCP', targetPort: 8080 },
        { port: 443, protocol: 'TCP', targetPort: 8443 },
      ]),
    );
    assert.throws(() => s.apply('a', svc([{ port: 80, targetPort: 9090 }])), {
      message:
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .spec.ports[port=80,protocol="TCP"].targetPort',
    });
    s.apply(
      'a',
      svc([
        { port: 80, targetPort: 9090 },
        { port: 8080, targetPort: 8080 },
      ]),
      true,
    );
    assert.deepEqual(s.object.spec, {
      ports: [
        { port: 80, protocol: 'TCP', targetPort: 9090 },
        { port: 443, protocol: 'TCP', targetPort: 8443 },
        { port: 8080, targetPort: 8080 },
      ],
    });
  });

  it('adds and removes its own items of a set list, leaving others', () => {
    const s = new Subject(pod);
    const withFinalizers = (finalizers: string[]): Obj => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', finalizers },
    });
    s.update('controller', withFinalizers(['theirs']));
    s.apply('a', withFinalizers(['mine']));
    assert.deepEqual((s.object.metadata as Obj).finalizers, ['theirs', 'mine']);
    s.apply('a', { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
    assert.deepEqual((s.object.metadata as Obj).finalizers, ['theirs']);
  });

  it('lets kubectl take conflicts its client-side last-applied configuration covers', () => {
    const s = new Subject();
    s.update('kubectl-client-side-apply', cm({ k: '1' }));
    assert.throws(() => s.apply('kubectl', cm({ k: '2' })));
    const allowed = applyConfiguration({
      live: s.object,
      config: cm({ k: '2' }),
      managers: s.managers,
      writer: writer('kubectl'),
      force: false,
      type: configMap,
      allowedConflicts: { 'f:data': { 'f:k': {} } },
    });
    assert.deepEqual(allowed.object.data, { k: '2' });
  });
});

describe('recordUpdate', () => {
  it('gives the writer what it changed and takes it from everyone else', () => {
    const s = new Subject();
    s.apply('a', cm({ k: '1', j: '1' }));
    s.update('kubectl-edit', cm({ k: '2', j: '1', n: '1' }), '2024-03-03T00:00:00Z');
    assert.deepEqual(s.fields(), {
      'a/Apply': { 'f:data': { 'f:j': {} } },
      'kubectl-edit/Update': { 'f:data': { 'f:k': {}, 'f:n': {} } },
    });
    assert.equal(encodeManaged(s.managers)![1]!.time, '2024-03-03T00:00:00Z');
  });

  it('drops removed fields from every manager; an update that changes nothing changes nothing', () => {
    const s = new Subject();
    s.update('u', cm({ k: '1', j: '1' }));
    const before = s.managers;
    s.update('v', cm({ k: '1', j: '1' }));
    assert.equal(s.managers, before);
    s.update('v', cm({ k: '1' }));
    assert.deepEqual(s.fields(), { 'u/Update': { 'f:data': { '.': {}, 'f:k': {} } } });
  });
});

describe('managed entries', () => {
  it('decodes valid entries and refuses invalid ones', () => {
    const entry = {
      manager: 'm',
      operation: 'Update',
      apiVersion: 'v1',
      time: '2024-01-01T00:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:data': {} },
    };
    assert.equal(decodeManaged([entry])?.size, 1);
    for (const bad of [
      { ...entry, operation: 'Patch' },
      { ...entry, fieldsType: 'FieldsV2' },
      { ...entry, apiVersion: '' },
      { ...entry, fieldsV1: { x: {} } },
      { ...entry, time: 'yesterday' },
    ]) {
      assert.equal(decodeManaged([bad]), undefined, JSON.stringify(bad));
    }
  });

  it('orders entries as real servers do: Apply first, then oldest first', () => {
    const s = new Subject();
    s.update('later', cm({ a: '1' }), '2024-01-02T00:00:00Z');
    s.update('earlier', cm({ a: '1', b: '1' }), '2024-01-01T00:00:00Z');
    s.apply('applier', cm({ c: '1' }), false, '2024-01-03T00:00:00Z');
    assert.deepEqual(
      encodeManaged(s.managers)!.map((e) => e.manager),
      ['applier', 'earlier', 'later'],
    );
  });

  it('merges the oldest of more than ten Update entries into ancient-changes', () => {
    const s = new Subject();
    const data: Obj = {};
    for (let i = 0; i < 12; i++) {
      data[`k${i}`] = '1';
      s.update(`m${i}`, cm({ ...data }), `2024-01-01T00:00:${String(10 + i)}Z`);
    }
    const names = encodeManaged(s.managers)!.map((e) => e.manager);
    assert.equal(names.length, 10);
    assert.ok(names.includes('ancient-changes'));
    assert.ok(!names.includes('m0') && !names.includes('m1') && !names.includes('m2'));
  });
});
