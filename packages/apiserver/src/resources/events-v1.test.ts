import assert from 'node:assert/strict';
import { after, describe, it } from '../../../../test/support/node-test.ts';
import { createApiServer, defaultApiServerOptions } from '../app.ts';
import { coreFromEventsV1, eventsV1FromCore } from './events-v1.ts';

describe('Events served as core/v1 and events.k8s.io/v1 from one store', () => {
  const app = createApiServer({ ...defaultApiServerOptions, token: 't' });
  after(() => app.close());
  const call = async (method: string, path: string, body?: unknown, contentType = 'application/json') => {
    const res = await app.fetch(
      new Request(`http://x${path}`, {
        method,
        headers: { authorization: 'Bearer t', 'content-type': contentType },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );
    return {
      status: res.status,
      body: (await res.json()) as Record<string, unknown> & { items?: Array<Record<string, unknown>> },
    };
  };
  const core = '/api/v1/namespaces/default/events';
  const v1 = '/apis/events.k8s.io/v1/namespaces/default/events';

  it('maps the renamed fields both ways, losslessly', () => {
    const stored = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'e' },
      involvedObject: { kind: 'Pod', name: 'p' },
      message: 'm',
      reason: 'R',
      reportingComponent: 'raven',
      count: 2,
      type: 'Normal',
    };
    const shown = eventsV1FromCore(stored);
    assert.deepEqual(shown, {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'e' },
      regarding: { kind: 'Pod', name: 'p' },
      note: 'm',
      reason: 'R',
      reportingController: 'raven',
      deprecatedCount: 2,
      type: 'Normal',
    });
    assert.deepEqual(coreFromEventsV1(shown), stored);
  });

  it('lists an event written through core/v1 through events.k8s.io/v1, and the other way round', async () => {
    const written = await call('POST', core, {
      metadata: { name: 'from-core' },
      involvedObject: { kind: 'Pod', name: 'web', namespace: 'default' },
      reason: 'Started',
      message: 'started',
      type: 'Normal',
    });
    assert.equal(written.status, 201);
    const seen = await call('GET', `${v1}/from-core`);
    assert.equal(seen.status, 200);
    assert.equal(seen.body.apiVersion, 'events.k8s.io/v1');
    assert.deepEqual(seen.body.regarding, { kind: 'Pod', name: 'web', namespace: 'default' });
    assert.equal(seen.body.note, 'started');

    const other = await call('POST', v1, {
      metadata: { name: 'from-v1' },
      eventTime: '2026-01-01T00:00:00.000000Z',
      reportingController: 'raven.openstack.org/controller',
      reportingInstance: 'raven-0',
      action: 'Wire',
      reason: 'PortCreated',
      note: 'port created',
      type: 'Normal',
      regarding: { kind: 'Pod', name: 'web', namespace: 'default' },
    });
    assert.equal(other.status, 201, JSON.stringify(other.body));
    assert.equal(other.body.note, 'port created');
    const asCore = await call('GET', `${core}/from-v1`);
    assert.equal(asCore.body.message, 'port created');
    assert.equal(asCore.body.reportingComponent, 'raven.openstack.org/controller');
    assert.deepEqual(asCore.body.involvedObject, { kind: 'Pod', name: 'web', namespace: 'default' });
  });

  it('selects by the field labels of each version', async () => {
    const byCore = await call('GET', `${core}?fieldSelector=involvedObject.name=web,reason=PortCreated`);
    assert.deepEqual(
      byCore.body.items?.map((e) => (e.metadata as { name: string }).name),
      ['from-v1'],
    );
    const byV1 = await call(
      'GET',
      `${v1}?fieldSelector=regarding.name=web,reportingController=raven.openstack.org/controller`,
    );
    assert.deepEqual(
      byV1.body.items?.map((e) => (e.metadata as { name: string }).name),
      ['from-v1'],
    );
  });
});

describe('PATCH through the events.k8s.io/v1 view', () => {
  const app = createApiServer({ ...defaultApiServerOptions, token: 't' });
  after(() => app.close());

  it('patches the fields as that version names them', async () => {
    const headers = { authorization: 'Bearer t', 'content-type': 'application/json' };
    const created = await app.fetch(
      new Request('http://x/apis/events.k8s.io/v1/namespaces/default/events', {
        method: 'POST',
        headers,
        body: JSON.stringify({
          metadata: { name: 'e' },
          eventTime: '2026-01-01T00:00:00.000000Z',
          reportingController: 'raven',
          reportingInstance: 'raven-0',
          action: 'Wire',
          regarding: { kind: 'Pod', name: 'p', namespace: 'default' },
          note: 'old',
          reason: 'R',
          type: 'Normal',
        }),
      }),
    );
    assert.equal(created.status, 201);
    const patched = await app.fetch(
      new Request('http://x/apis/events.k8s.io/v1/namespaces/default/events/e', {
        method: 'PATCH',
        headers: { ...headers, 'content-type': 'application/merge-patch+json' },
        body: JSON.stringify({ note: 'new' }),
      }),
    );
    assert.equal(patched.status, 200, await patched.clone().text());
    assert.equal(((await patched.json()) as { note: string }).note, 'new');
    assert.equal(app.store.get('/events', 'default', 'e')?.message, 'new');
  });
});
