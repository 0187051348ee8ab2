// kubectl 1.20 (Debian's kubernetes-client, extracted by scripts/fetch-kubectl.sh) against a real embedded API
// server over HTTPS: every command's output is checked, and every write is checked again on the server with request().
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from '../support/node-test.ts';
import { parse as parseYaml } from 'yaml';
import { kubectlPath, startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

interface Obj {
  kind: string;
  apiVersion: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    generation?: number;
  };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  data?: Record<string, string>;
  type?: string;
}

interface List {
  kind: string;
  items: Obj[];
}

const manifest = (ns: string, { data = 'one', port = 80, label = 'web' } = {}): string => `
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  namespace: ${ns}
  labels: {app: ${label}}
data:
  mode: ${data}
---
apiVersion: v1
kind: Service
metadata:
  name: web
  namespace: ${ns}
spec:
  selector: {app: web}
  ports:
  - name: http
    port: ${port}
    targetPort: 8080
---
apiVersion: v1
kind: Pod
metadata:
  name: web-0
  namespace: ${ns}
  labels: {app: web}
spec:
  containers:
  - name: main
    image: nginx:1.25
    ports:
    - containerPort: 8080
`;

const pod = (name: string, labels: Record<string, string> = {}): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: { containers: [{ name: 'main', image: 'busybox' }] },
  });

const crd = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Phase, type: string, jsonPath: .status.phase}
    - {name: Color, type: string, jsonPath: .spec.color, priority: 1}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer}
              color: {type: string}
          status:
            type: object
            properties:
              phase: {type: string}
`;

/** Splits `kubectl get` table output into rows of columns (columns are separated by 3+ spaces or by runs of spaces). */
function table(output: string): string[][] {
  return output
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s{2,}/));
}

describe('kubectl 1.20 against the embedded API server', () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer();
  });

  after(async () => {
    await server.stop();
  });

  /** One request to the server, bounded by a timeout, with the body read. */
  async function send(
    path: string,
    method = 'GET',
    body?: string,
    contentType = 'application/json',
  ): Promise<{ status: number; text: string }> {
    const res = await server.request(path, {
      method,
      ...(body === undefined ? {} : { body, headers: { 'content-type': contentType } }),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: res.status, text: await res.text() };
  }

  async function getJson<T = Obj>(path: string): Promise<T> {
    const { status, text } = await send(path);
    assert.equal(status, 200, `GET ${path}: ${text}`);
    return JSON.parse(text) as T;
  }

  async function statusOf(path: string): Promise<number> {
    return (await send(path)).status;
  }

  async function createPod(ns: string, name: string, labels: Record<string, string> = {}): Promise<void> {
    const { status, text } = await send(`/api/v1/namespaces/${ns}/pods`, 'POST', pod(name, labels));
    assert.equal(status, 201, text);
  }

  it('create ns makes an Active namespace', async () => {
    assert.equal((await server.kubectl(['create', 'ns', 'k-create'])).trim(), 'namespace/k-create created');
    const ns = await getJson('/api/v1/namespaces/k-create');
    assert.equal(ns.status?.phase, 'Active');
    assert.ok(ns.metadata.uid);
    await assert.rejects(server.kubectl(['create', 'ns', 'k-create']), /AlreadyExists|already exists/);
  });

  it('apply -f - creates, leaves unchanged, then configures what changed', async () => {
    await server.kubectl(['create', 'ns', 'k-apply']);
    const first = await server.kubectl(['apply', '-f', '-'], { input: manifest('k-apply') });
    assert.deepEqual(first.trim().split('\n'), [
      'configmap/settings created',
      'service/web created',
      'pod/web-0 created',
    ]);
    const before = await getJson('/api/v1/namespaces/k-apply/pods/web-0');

    const second = await server.kubectl(['apply', '-f', '-'], { input: manifest('k-apply') });
    assert.deepEqual(second.trim().split('\n'), [
      'configmap/settings unchanged',
      'service/web unchanged',
      'pod/web-0 unchanged',
    ]);
    assert.equal(
      (await getJson('/api/v1/namespaces/k-apply/pods/web-0')).metadata.resourceVersion,
      before.metadata.resourceVersion,
    );

    const third = await server.kubectl(['apply', '-f', '-'], {
      input: manifest('k-apply', { data: 'two', port: 81, label: 'web2' }),
    });
    assert.deepEqual(third.trim().split('\n'), [
      'configmap/settings configured',
      'service/web configured',
      'pod/web-0 unchanged',
    ]);
    const cm = await getJson('/api/v1/namespaces/k-apply/configmaps/settings');
    assert.deepEqual(cm.data, { mode: 'two' });
    assert.deepEqual(cm.metadata.labels, { app: 'web2' });
    const lastApplied = JSON.parse(
      cm.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'] ?? '{}',
    ) as Obj;
    assert.deepEqual(lastApplied.data, { mode: 'two' });
    const svc = await getJson('/api/v1/namespaces/k-apply/services/web');
    assert.deepEqual(svc.spec?.ports, [{ name: 'http', port: 81, protocol: 'TCP', targetPort: 8080 }]);
    assert.match(String(svc.spec?.clusterIP), /^10\./);
  });

  it('get -o json, -o yaml and -o wide show the stored objects', async () => {
    await server.kubectl(['create', 'ns', 'k-get']);
    await server.kubectl(['apply', '-f', '-'], { input: manifest('k-get') });
    const stored = await getJson('/api/v1/namespaces/k-get/pods/web-0');

    const one = JSON.parse(await server.kubectl(['-n', 'k-get', 'get', 'pod', 'web-0', '-o', 'json'])) as Obj;
    assert.equal(one.kind, 'Pod');
    assert.equal(one.apiVersion, 'v1');
    assert.equal(one.metadata.uid, stored.metadata.uid);
    assert.equal((one.spec?.containers as Array<{ image: string }>)[0]?.image, 'nginx:1.25');

    const list = JSON.parse(
      await server.kubectl(['-n', 'k-get', 'get', 'pods,configmaps,services', '-o', 'json']),
    ) as List;
    assert.equal(list.kind, 'List');
    const names = list.items.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    assert.ok(
      names.includes('Pod/web-0') && names.includes('ConfigMap/settings') && names.includes('Service/web'),
      names.join(' '),
    );

    const yaml = parseYaml(await server.kubectl(['-n', 'k-get', 'get', 'configmap', 'settings', '-o', 'yaml'])) as Obj;
    assert.equal(yaml.kind, 'ConfigMap');
    assert.deepEqual(yaml.data, { mode: 'one' });
    assert.equal(yaml.metadata.namespace, 'k-get');

    const pods = table(await server.kubectl(['-n', 'k-get', 'get', 'pods', '-o', 'wide']));
    assert.deepEqual(pods[0], [
      'NAME',
      'READY',
      'STATUS',
      'RESTARTS',
      'AGE',
      'IP',
      'NODE',
      'NOMINATED NODE',
      'READINESS GATES',
    ]);
    assert.equal(pods.length, 2);
    const [name, ready, status, restarts, age, ip, node, nominated, gates] = pods[1]!;
    assert.deepEqual(
      { name, ready, status, restarts, ip, node, nominated, gates },
      {
        name: 'web-0',
        ready: '0/1',
        status: 'Pending',
        restarts: '0',
        ip: '<none>',
        node: '<none>',
        nominated: '<none>',
        gates: '<none>',
      },
    );
    assert.match(age!, /^\d+s$/);

    const services = table(await server.kubectl(['-n', 'k-get', 'get', 'services', '-o', 'wide']));
    assert.deepEqual(services[0], ['NAME', 'TYPE', 'CLUSTER-IP', 'EXTERNAL-IP', 'PORT(S)', 'AGE', 'SELECTOR']);
    const svc = await getJson('/api/v1/namespaces/k-get/services/web');
    const row = services[1]!;
    assert.deepEqual(
      [row[0], row[1], row[2], row[3], row[4], row[6]],
      ['web', 'ClusterIP', svc.spec?.clusterIP, '<none>', '80/TCP', 'app=web'],
    );

    const plain = table(await server.kubectl(['-n', 'k-get', 'get', 'pods']));
    assert.deepEqual(plain[0], ['NAME', 'READY', 'STATUS', 'RESTARTS', 'AGE']);
  });

  it('create configmap and secret from literals, shown by get with their types', async () => {
    await server.kubectl(['create', 'ns', 'k-literals']);
    const ns = ['-n', 'k-literals'];
    assert.equal(
      (await server.kubectl([...ns, 'create', 'configmap', 'conf', '--from-literal=a=1', '--from-literal=b=2'])).trim(),
      'configmap/conf created',
    );
    assert.equal(
      (await server.kubectl([...ns, 'create', 'secret', 'generic', 'creds', '--from-literal=password=s3cret'])).trim(),
      'secret/creds created',
    );
    const secret = await getJson(`/api/v1/namespaces/k-literals/secrets/creds`);
    assert.equal(secret.type, 'Opaque');
    assert.deepEqual(secret.data, { password: Buffer.from('s3cret').toString('base64') });
    assert.deepEqual((await getJson('/api/v1/namespaces/k-literals/configmaps/conf')).data, { a: '1', b: '2' });
    const secrets = table(await server.kubectl([...ns, 'get', 'secrets']));
    assert.deepEqual(
      secrets.map((r) => r.slice(0, 3)),
      [
        ['NAME', 'TYPE', 'DATA'],
        ['creds', 'Opaque', '1'],
      ],
    );
    const configmaps = table(await server.kubectl([...ns, 'get', 'configmaps', 'conf']));
    assert.deepEqual(
      configmaps.map((r) => r.slice(0, 2)),
      [
        ['NAME', 'DATA'],
        ['conf', '2'],
      ],
    );
  });

  it('get -w lists the changes another client makes', async () => {
    await server.kubectl(['create', 'ns', 'k-watch']);
    await createPod('k-watch', 'marker');
    const child = spawn(
      kubectlPath,
      [
        '--kubeconfig',
        server.kubeconfig,
        '--cache-dir',
        join(server.dir, 'watch-cache'),
        '-n',
        'k-watch',
        'get',
        'pods',
        '--watch',
        '--output-watch-events',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 },
    );
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exited = new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.once('error', () => resolve());
    });
    try {
      // kubectl prints the listed pod, then watches from the list's resourceVersion: every later write reaches it.
      await waitFor('kubectl get -w to list the marker pod', () => /ADDED\s+marker/.test(out));
      await createPod('k-watch', 'watched', { v: '1' });
      const patch = await send(
        '/api/v1/namespaces/k-watch/pods/watched',
        'PATCH',
        JSON.stringify({ metadata: { labels: { v: '2' } } }),
        'application/merge-patch+json',
      );
      assert.equal(patch.status, 200, patch.text);
      const del = await send('/api/v1/namespaces/k-watch/pods/watched', 'DELETE');
      assert.equal(del.status, 200, del.text);
      await waitFor('DELETED watched', () => /DELETED\s+watched/.test(out));
      const events = table(out)
        .filter((r) => r[1] === 'watched')
        .map((r) => r[0]);
      assert.deepEqual(events, ['ADDED', 'MODIFIED', 'DELETED'], out);
      assert.equal(child.exitCode, null, 'the watch is still open');
    } finally {
      child.kill();
      await exited;
    }
  });

  it('annotate, label and patch (json, merge, strategic) change the stored pod', async () => {
    await server.kubectl(['create', 'ns', 'k-patch']);
    await server.kubectl(['apply', '-f', '-'], { input: manifest('k-patch') });
    const ns = ['-n', 'k-patch'];
    assert.equal(
      (await server.kubectl([...ns, 'annotate', 'pod', 'web-0', 'owner=team-a'])).trim(),
      'pod/web-0 annotated',
    );
    assert.equal((await server.kubectl([...ns, 'label', 'pod', 'web-0', 'tier=front'])).trim(), 'pod/web-0 labeled');
    await assert.rejects(
      server.kubectl([...ns, 'label', 'pod', 'web-0', 'tier=back']),
      /already has a value|--overwrite/,
    );
    await server.kubectl([...ns, 'label', 'pod', 'web-0', 'tier=back', '--overwrite']);
    assert.equal(
      (
        await server.kubectl([
          ...ns,
          'patch',
          'pod',
          'web-0',
          '--type=json',
          '-p',
          '[{"op":"add","path":"/metadata/labels/json","value":"yes"}]',
        ])
      ).trim(),
      'pod/web-0 patched',
    );
    await server.kubectl([
      ...ns,
      'patch',
      'pod',
      'web-0',
      '--type=merge',
      '-p',
      '{"metadata":{"labels":{"merge":"yes","app":null}}}',
    ]);
    await server.kubectl([
      ...ns,
      'patch',
      'pod',
      'web-0',
      '--type=strategic',
      '-p',
      '{"spec":{"containers":[{"name":"main","image":"nginx:1.26"}]}}',
    ]);

    const obj = await getJson('/api/v1/namespaces/k-patch/pods/web-0');
    assert.deepEqual(obj.metadata.labels, { tier: 'back', json: 'yes', merge: 'yes' });
    assert.equal(obj.metadata.annotations?.owner, 'team-a');
    const containers = obj.spec?.containers as Array<{ name: string; image: string; ports?: unknown[] }>;
    assert.equal(containers.length, 1, 'strategic merge keeps the list merged by name');
    assert.equal(containers[0]?.image, 'nginx:1.26');
    assert.deepEqual(containers[0]?.ports, [{ containerPort: 8080, protocol: 'TCP' }]);

    // Strategic merge on a Service merges ports by `port`; a JSON patch removal of a missing key fails with 422.
    await server.kubectl([
      ...ns,
      'patch',
      'service',
      'web',
      '-p',
      '{"spec":{"ports":[{"name":"metrics","port":9090}]}}',
    ]);
    const svc = await getJson('/api/v1/namespaces/k-patch/services/web');
    assert.deepEqual((svc.spec?.ports as Array<{ port: number }>).map((p) => p.port).sort(), [80, 9090]);
    await assert.rejects(
      server.kubectl([
        ...ns,
        'patch',
        'pod',
        'web-0',
        '--type=json',
        '-p',
        '[{"op":"remove","path":"/metadata/labels/missing"}]',
      ]),
      /Unprocessable|Invalid|missing|does not exist|nonexistent/i,
    );
    // A pod's spec is immutable outside the fields an update may change.
    await assert.rejects(
      server.kubectl([...ns, 'patch', 'pod', 'web-0', '--type=merge', '-p', '{"spec":{"restartPolicy":"Never"}}']),
      /Forbidden|Invalid|immutable|may not change/i,
    );
  });

  it('delete pod removes it', async () => {
    await server.kubectl(['create', 'ns', 'k-delete']);
    await createPod('k-delete', 'doomed');
    assert.equal((await server.kubectl(['-n', 'k-delete', 'delete', 'pod', 'doomed'])).trim(), 'pod "doomed" deleted');
    assert.equal(await statusOf('/api/v1/namespaces/k-delete/pods/doomed'), 404);
    await assert.rejects(server.kubectl(['-n', 'k-delete', 'delete', 'pod', 'doomed']), /NotFound|not found/);
  });

  it('delete namespace removes it and everything in it', async () => {
    await server.kubectl(['create', 'ns', 'k-gone']);
    await server.kubectl(['apply', '-f', '-'], { input: manifest('k-gone') });
    await createPod('k-gone', 'extra');
    assert.equal(
      (await server.kubectl(['delete', 'namespace', 'k-gone', '--timeout=20s'])).trim(),
      'namespace "k-gone" deleted',
    );
    await waitFor('namespace k-gone to go', async () => (await statusOf('/api/v1/namespaces/k-gone')) === 404);
    for (const path of ['pods/web-0', 'pods/extra', 'services/web', 'configmaps/settings', 'serviceaccounts/default']) {
      assert.equal(await statusOf(`/api/v1/namespaces/k-gone/${path}`), 404, path);
    }
    const pods = await getJson<List>('/api/v1/pods?fieldSelector=metadata.namespace%3Dk-gone');
    assert.deepEqual(pods.items, []);
    await assert.rejects(server.kubectl(['get', 'namespace', 'k-gone']), /NotFound|not found/);
  });

  it('explain pods either works or fails cleanly', async () => {
    const started = Date.now();
    try {
      const out = await server.kubectl(['explain', 'pods']);
      assert.match(out, /KIND:\s+Pod/);
    } catch (err) {
      // The server publishes an empty /openapi/v2, so kubectl has no schema to explain: a clean non-zero exit.
      const cause = (err as Error).cause as { code?: unknown; killed?: boolean; signal?: unknown };
      assert.equal(cause.killed, false, 'kubectl was not killed by the timeout');
      assert.equal(typeof cause.code, 'number');
      assert.notEqual(cause.code, 0);
      assert.match((err as Error).message, /error: .+/);
    }
    assert.ok(Date.now() - started < 25_000, 'explain did not hang');
  });

  it('a CRD with a status subresource and printer columns serves custom objects to kubectl', async () => {
    assert.equal(
      (await server.kubectl(['apply', '-f', '-'], { input: crd })).trim(),
      'customresourcedefinition.apiextensions.k8s.io/widgets.example.com created',
    );
    assert.match(
      await server.kubectl(['wait', '--for', 'condition=established', '--timeout=10s', 'crd/widgets.example.com']),
      /condition met/,
    );
    const crds = table(await server.kubectl(['get', 'crd', 'widgets.example.com']));
    assert.deepEqual(crds[0], ['NAME', 'CREATED AT']);
    assert.match(crds[1]![1]!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    await server.kubectl(['create', 'ns', 'k-crd']);
    const created = await server.kubectl(['-n', 'k-crd', 'create', '-f', '-'], {
      input: 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: small}\nspec: {size: 1, color: red}\n',
    });
    assert.equal(created.trim(), 'widget.example.com/small created');
    const applied = await server.kubectl(['apply', '-f', '-'], {
      input:
        'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: big, namespace: k-crd}\nspec: {size: 9, color: blue}\n',
    });
    assert.equal(applied.trim(), 'widget.example.com/big created');
    const reapplied = await server.kubectl(['apply', '-f', '-'], {
      input:
        'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: big, namespace: k-crd}\nspec: {size: 10, color: blue}\n',
    });
    assert.equal(reapplied.trim(), 'widget.example.com/big configured');
    const big = await getJson('/apis/example.com/v1/namespaces/k-crd/widgets/big');
    assert.deepEqual(big.spec, { size: 10, color: 'blue' });
    assert.equal(big.metadata.generation, 2);

    // Status only changes through /status; the main resource ignores it.
    const status = await send(
      '/apis/example.com/v1/namespaces/k-crd/widgets/big/status',
      'PATCH',
      JSON.stringify({ status: { phase: 'Ready' } }),
      'application/merge-patch+json',
    );
    assert.equal(status.status, 200, status.text);
    await server.kubectl([
      '-n',
      'k-crd',
      'patch',
      'widget',
      'small',
      '--type=merge',
      '-p',
      '{"status":{"phase":"Ignored"},"spec":{"size":2}}',
    ]);
    const small = await getJson('/apis/example.com/v1/namespaces/k-crd/widgets/small');
    assert.equal(small.status, undefined);
    assert.equal(small.spec?.size, 2);
    // Custom resources have no strategic merge patch, as on a real server.
    await assert.rejects(
      server.kubectl(['-n', 'k-crd', 'patch', 'widget', 'small', '-p', '{"spec":{"size":3}}']),
      /UnsupportedMediaType|unknown format/,
    );

    const rows = table(await server.kubectl(['-n', 'k-crd', 'get', 'widgets']));
    assert.deepEqual(rows, [
      ['NAME', 'SIZE', 'PHASE'],
      ['big', '10', 'Ready'],
      ['small', '2', '<none>'],
    ]);
    const wide = table(await server.kubectl(['-n', 'k-crd', 'get', 'wd', '-o', 'wide']));
    assert.deepEqual(wide, [
      ['NAME', 'SIZE', 'PHASE', 'COLOR'],
      ['big', '10', 'Ready', 'blue'],
      ['small', '2', '<none>', 'red'],
    ]);
    const list = JSON.parse(await server.kubectl(['-n', 'k-crd', 'get', 'widgets', '-o', 'json'])) as List;
    assert.deepEqual(
      list.items.map((w) => [w.kind, w.apiVersion, w.metadata.name, w.spec?.size]),
      [
        ['Widget', 'example.com/v1', 'big', 10],
        ['Widget', 'example.com/v1', 'small', 2],
      ],
    );
    assert.deepEqual(list.items[0]?.status, { phase: 'Ready' });

    assert.equal(
      (await server.kubectl(['-n', 'k-crd', 'delete', 'widget', 'small'])).trim(),
      'widget.example.com "small" deleted',
    );
    assert.equal(await statusOf('/apis/example.com/v1/namespaces/k-crd/widgets/small'), 404);
  });

  it('get --raw /version returns the server version', async () => {
    const version = JSON.parse(await server.kubectl(['get', '--raw', '/version'])) as {
      major: string;
      minor: string;
      gitVersion: string;
    };
    assert.deepEqual(version, await getJson('/version'));
    assert.match(version.gitVersion, /^v\d+\.\d+\.\d+/);
    assert.equal(version.major, '1');
  });
});
