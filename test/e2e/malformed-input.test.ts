/**
 * Malformed input over a real HTTPS connection, each answered with the status code, reason and message kube-apiserver
 * gives: too-deep JSON, wrong value types, unknown fields under each `fieldValidation`, Service address fields, an
 * oversized request head, and protobuf where it does not belong.
 */
import assert from 'node:assert/strict';
import { request as httpsRequest } from 'node:https';
import { after, before, describe, it } from '../support/node-test.ts';
import type { KubeObject } from '../../src/kube/api/index.ts';
import { encodeObject } from '@raven/apiserver';
import { assertFailure, call, createNamespace, ok } from '../support/api.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const service = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name },
  spec: { ports: [{ port: 80 }], ...spec },
});

describe('malformed input: status, reason and message as upstream', { timeout: 60_000 }, () => {
  let server: TestServer;
  let ns: string;
  const cms = () => `/api/v1/namespaces/${ns}/configmaps`;
  const svcs = () => `/api/v1/namespaces/${ns}/services`;
  before(async () => {
    server = await startTestServer();
    ns = await createNamespace(server, 'malformed');
  });
  after(async () => {
    await server.stop();
  });

  it('a 10,000-deep JSON body is a 400 BadRequest, not a 500', async () => {
    const deep = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":${'['.repeat(10_001)}${']'.repeat(10_001)}}`;
    const res = await server.request(cms(), {
      method: 'POST',
      body: deep,
      headers: { 'content-type': 'application/json' },
    });
    const status = assertFailure({ status: res.status, body: await res.json() }, 400, 'BadRequest');
    assert.match(
      status.message ?? '',
      /^the object provided is unrecognized \(must be of type ConfigMap\): exceeded max depth/,
    );
    // One level less decodes (and the unknown field is dropped with a warning).
    const fine = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":${'['.repeat(9_990)}${']'.repeat(9_990)}}`;
    const created = await server.request(cms(), {
      method: 'POST',
      body: fine,
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(created.status, 201);
    assert.equal(created.headers.get('warning'), '299 - "unknown field \\"x\\""');
  });

  it('a value of the wrong type is a 400 naming the Go field, as the JSON decoder does', async () => {
    const reply = await call(server, 'POST', cms(), { metadata: { name: 'typed' }, data: { a: 5 } });
    const status = assertFailure(reply, 400, 'BadRequest');
    assert.equal(
      status.message,
      'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string',
    );
    const pod = {
      metadata: { name: 'typed' },
      spec: { containers: [{ name: 'c', image: 7 }] },
    };
    const podStatus = assertFailure(
      await call(server, 'POST', `/api/v1/namespaces/${ns}/pods`, pod),
      400,
      'BadRequest',
    );
    assert.equal(
      podStatus.message,
      'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string',
    );
  });

  it('fieldValidation: Strict refuses unknown fields, Warn drops them with a warning (the default), Ignore drops them', async () => {
    const body = (name: string) => ({
      metadata: { name },
      spec: { ports: [{ port: 80, bogus: 1 }], foo: 'bar' },
    });
    const strict = assertFailure(
      await call(server, 'POST', `${svcs()}?fieldValidation=Strict`, body('strict')),
      400,
      'BadRequest',
    );
    assert.equal(
      strict.message,
      'Service in version "v1" cannot be handled as a Service: strict decoding error: unknown field "spec.ports[0].bogus", unknown field "spec.foo"',
    );
    assert.equal((await call(server, 'GET', `${svcs()}/strict`)).status, 404);
    for (const [mode, warning] of [
      ['Warn', '299 - "unknown field \\"spec.ports[0].bogus\\"", 299 - "unknown field \\"spec.foo\\""'],
      ['', '299 - "unknown field \\"spec.ports[0].bogus\\"", 299 - "unknown field \\"spec.foo\\""'],
      ['Ignore', null],
    ] as const) {
      const name = `mode-${mode.toLowerCase() || 'default'}`;
      const reply = await call(server, 'POST', `${svcs()}${mode ? `?fieldValidation=${mode}` : ''}`, body(name));
      assert.equal(reply.status, 201, JSON.stringify(reply.body));
      assert.equal(reply.headers.get('warning'), warning, mode);
      const stored = await ok(server, 'GET', `${svcs()}/${name}`);
      assert.equal((stored.spec as { foo?: string }).foo, undefined, 'the unknown field is not stored');
      assert.deepEqual(Object.keys((stored.spec as { ports: object[] }).ports[0]!).sort(), [
        'port',
        'protocol',
        'targetPort',
      ]);
    }
    const bogus = assertFailure(
      await call(server, 'POST', `${svcs()}?fieldValidation=Bogus`, body('bogus')),
      422,
      'Invalid',
    );
    assert.equal(bogus.details?.kind, 'CreateOptions');
    assert.deepEqual(
      bogus.details?.causes?.map((c) => c.field),
      ['fieldValidation'],
    );
  });

  it('Service externalIPs, loadBalancerIP and loadBalancerSourceRanges are validated (422 with a cause each)', async () => {
    const cases: Array<[Record<string, unknown>, Array<[string, string]>]> = [
      [
        { externalIPs: ['not-an-ip', '10.0.0.0/8', '127.0.0.1'] },
        [
          [
            'spec.externalIPs[0]',
            'Invalid value: "not-an-ip": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
          ],
          [
            'spec.externalIPs[1]',
            'Invalid value: "10.0.0.0/8": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
          ],
          [
            'spec.externalIPs[2]',
            'Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
          ],
        ],
      ],
      [
        { type: 'LoadBalancer', loadBalancerIP: '1.2.3.4.5' },
        [
          [
            'spec.loadBalancerIP',
            'Invalid value: "1.2.3.4.5": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
          ],
        ],
      ],
      [
        { type: 'LoadBalancer', loadBalancerSourceRanges: ['10.0.0.0/33', ' 10.1.0.0/16 '] },
        [
          [
            'spec.loadBalancerSourceRanges[0]',
            'Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
          ],
        ],
      ],
      [
        { loadBalancerSourceRanges: ['10.1.0.0/16'] },
        [['spec.loadBalancerSourceRanges', "Forbidden: may only be used when `type` is 'LoadBalancer'"]],
      ],
    ];
    for (const [i, [spec, expected]] of cases.entries()) {
      const status = assertFailure(await call(server, 'POST', svcs(), service(`addr-${i}`, spec)), 422, 'Invalid');
      assert.deepEqual(
        status.details?.causes?.map((c) => [c.field, c.message]),
        expected,
        JSON.stringify(spec),
      );
    }
    await ok(
      server,
      'POST',
      svcs(),
      service('addr-ok', {
        type: 'LoadBalancer',
        externalIPs: ['192.0.2.10'],
        loadBalancerSourceRanges: ['10.1.0.0/16'],
      }),
    );
  });

  it('a request head over 1 MiB gets 431 with a Status body', async () => {
    const url = new URL(`${server.url}/api/v1/namespaces?labelSelector=a%3D${'b'.repeat(1_100_000)}`);
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpsRequest(
        url,
        { ca: server.caPem, headers: { authorization: `Bearer ${server.token}` } },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (text += chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on('error', reject);
      req.end();
    });
    assert.equal(status, 431);
    assert.deepEqual(JSON.parse(body), {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Request Header Fields Too Large',
      code: 431,
    });
    // A long URL under the limit is served (kube-apiserver allows 1 MiB; Node's own default is 16 KiB).
    const long = await call(
      server,
      'GET',
      `/api/v1/namespaces?labelSelector=a%3D${'b'.repeat(60)}&x=${'y'.repeat(20_000)}`,
    );
    assert.equal(long.status, 200);
  });

  it('protobuf: a body without the magic is a 400; custom resources take and give JSON only (415, 406)', async () => {
    const garbage = await server.request(cms(), {
      method: 'POST',
      body: new Uint8Array([1, 2, 3]),
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
    });
    assertFailure({ status: garbage.status, body: await garbage.json() }, 400, 'BadRequest');
    await ok(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    });
    const widgets = `/apis/example.com/v1/namespaces/${ns}/widgets`;
    const cm: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } };
    const asProto = await server.request(widgets, {
      method: 'POST',
      body: encodeObject(cm),
      headers: { 'content-type': 'application/vnd.kubernetes.protobuf' },
    });
    const unsupported = assertFailure(
      { status: asProto.status, body: await asProto.json() },
      415,
      'UnsupportedMediaType',
    );
    assert.equal(
      unsupported.message,
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
    );
    const onlyProto = await server.request(widgets, { headers: { accept: 'application/vnd.kubernetes.protobuf' } });
    assertFailure({ status: onlyProto.status, body: await onlyProto.json() }, 406, 'NotAcceptable');
    const either = await server.request(widgets, {
      headers: { accept: 'application/vnd.kubernetes.protobuf,application/json' },
    });
    assert.equal(either.headers.get('content-type'), 'application/json');
    assert.equal(((await either.json()) as { kind: string }).kind, 'WidgetList');
  });
});
