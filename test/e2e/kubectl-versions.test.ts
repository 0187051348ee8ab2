/**
 * Real kubectl builds against one embedded API server (HTTPS, RBAC on): 1.20 from Debian and 1.27–1.33 next to the
 * gcloud SDK. Since 1.32 kubectl sends protobuf bodies for built-in kinds, so this is the protobuf proof with a
 * client nobody here wrote. Each build runs the same script in its own namespace — every `create` generator, apply
 * (client- and server-side), replace, the three patch types, `scale`, `get -w`, `delete --wait`, `auth can-i` — and every
 * write is read back from the server. A build that is absent is skipped, and the test output says which.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from '../support/node-test.ts';
import { promisify } from 'node:util';
import type { KubeObject } from '../../src/kube/api/index.ts';
import { selfSignedCertificate } from '@raven/dev';
import { ok } from '../support/api.ts';
import { kubectlPath, startTestServer, type TestServer } from '../support/server.ts';
import { waitFor } from '../support/wait.ts';

const run = promisify(execFile);
const gcloud = '/usr/lib/google-cloud-sdk/bin';
const builds: Array<{ version: string; path: string }> = [
  { version: '1.20', path: kubectlPath },
  ...[27, 28, 29, 30, 31, 32, 33].map((minor) => ({ version: `1.${minor}`, path: `${gcloud}/kubectl.1.${minor}` })),
];

const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.kv.example.com}
spec:
  group: kv.example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, properties: {size: {type: integer}}}}}}
`;

const manifest = (ns: string, value: string) => `apiVersion: v1
kind: ConfigMap
metadata: {name: applied, namespace: ${ns}}
data: {v: "${value}"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: applied, namespace: ${ns}}
spec:
  replicas: 2
  selector: {matchLabels: {app: applied}}
  template:
    metadata: {labels: {app: applied}}
    spec:
      containers:
      - name: web
        image: nginx:1.25
        ports: [{containerPort: 80}]
        livenessProbe: {httpGet: {path: /healthz, port: 80}}
      volumes: [{name: tmp, emptyDir: {}}]
---
apiVersion: kv.example.com/v1
kind: Gadget
metadata: {name: applied, namespace: ${ns}}
spec: {size: ${value}}
`;

describe('kubectl 1.20 and 1.27–1.33 against the embedded API server', { timeout: 600_000 }, () => {
  let server: TestServer;
  let certFile: string;
  let keyFile: string;
  before(async () => {
    server = await startTestServer({
      authorizationMode: 'RBAC',
      tokenUsers: new Map([
        ['viewer-token', { username: 'viewer', uid: 'v1', groups: ['viewers', 'system:authenticated'] }],
      ]),
    });
    const tls = await selfSignedCertificate('kv.example.com');
    certFile = join(server.dir, 'tls.crt');
    keyFile = join(server.dir, 'tls.key');
    writeFileSync(certFile, tls.cert);
    writeFileSync(keyFile, tls.key);
    await server.kubectl(['apply', '-f', '-'], { input: crd });
  });
  after(async () => {
    await server.stop();
  });

  const get = (path: string) => ok(server, 'GET', path);

  for (const { version, path } of builds) {
    it(`kubectl ${version}`, async (t) => {
      if (!existsSync(path)) return t.skip(`kubectl ${version} is absent (${path})`);
      const minor = Number(version.split('.')[1]);
      const ns = `kv-${minor}`;
      const cache = join(server.dir, `cache-${minor}`);
      const kubectl = async (args: string[], input?: string): Promise<string> => {
        const child = run(path, ['--kubeconfig', server.kubeconfig, '--cache-dir', cache, ...args], {
          timeout: 30_000,
        });
        if (input !== undefined) child.child.stdin?.end(input);
        try {
          return (await child).stdout;
        } catch (err) {
          const e = err as { stderr?: string; message: string };
          throw new Error(`kubectl ${version} ${args.join(' ')}: ${e.stderr || e.message}`, { cause: err });
        }
      };
      const inNs = (...args: string[]) => kubectl(['-n', ns, ...args]);
      const api = (resource: string, name: string) => get(`/api/v1/namespaces/${ns}/${resource}/${name}`);

      // create: every generator.
      assert.equal((await kubectl(['create', 'namespace', ns])).trim(), `namespace/${ns} created`);
      await inNs('create', 'configmap', 'cm', '--from-literal=a=b');
      await inNs('create', 'secret', 'generic', 'generic', '--from-literal=password=s3cr3t');
      await inNs('create', 'secret', 'tls', 'tls', `--cert=${certFile}`, `--key=${keyFile}`);
      await inNs('create', 'secret', 'docker-registry', 'registry', '--docker-username=u', '--docker-password=p');
      await inNs('create', 'service', 'clusterip', 'web', '--tcp=80:8080');
      await inNs('create', 'service', 'loadbalancer', 'lb', '--tcp=443:8443');
      await inNs('create', 'serviceaccount', 'bot');
      await inNs('create', 'deployment', 'web', '--image=nginx:1.25');
      await inNs('create', 'role', 'reader', '--verb=get,list', '--resource=pods,configmaps');
      await inNs('create', 'rolebinding', 'reader', '--role=reader', '--serviceaccount', `${ns}:bot`);
      await kubectl(['create', 'clusterrole', `kv-${minor}`, '--verb=get', '--resource=nodes']);
      await kubectl(['create', 'clusterrolebinding', `kv-${minor}`, `--clusterrole=kv-${minor}`, '--user=viewer']);
      await inNs('run', 'pod', '--image=busybox', '--restart=Never', '--', 'sleep', '1');
      assert.deepEqual((await api('configmaps', 'cm')).data, { a: 'b' });
      const generic = await api('secrets', 'generic');
      assert.equal(Buffer.from((generic.data as Record<string, string>).password!, 'base64').toString(), 's3cr3t');
      assert.equal((await api('secrets', 'tls')).type, 'kubernetes.io/tls');
      assert.equal((await api('secrets', 'registry')).type, 'kubernetes.io/dockerconfigjson');
      const lb = await api('services', 'lb');
      assert.equal((lb.spec as { type: string }).type, 'LoadBalancer');
      assert.ok((lb.spec as { ports: Array<{ nodePort?: number }> }).ports[0]!.nodePort);
      const deployment = await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
      const spec = deployment.spec as {
        replicas: number;
        template: { spec: { containers: Array<{ image: string }> } };
      };
      assert.deepEqual([spec.replicas, spec.template.spec.containers[0]!.image], [1, 'nginx:1.25']);
      const binding = await get(`/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings/reader`);
      assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'bot', namespace: ns }]);
      assert.equal(((await api('pods', 'pod')).spec as { restartPolicy: string }).restartPolicy, 'Never');

      // A ServiceAccount token (kubectl create token is 1.24+), used for real: the Role allows get, not delete.
      if (minor >= 24) {
        const token = (await inNs('create', 'token', 'bot')).trim();
        assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/);
        assert.equal((await inNs('--token', token, 'get', 'configmap', 'cm', '-o', 'name')).trim(), 'configmap/cm');
        await assert.rejects(inNs('--token', token, 'delete', 'configmap', 'cm'), (err: Error) => {
          assert.match(
            err.message,
            new RegExp(
              `configmaps "cm" is forbidden: User "system:serviceaccount:${ns}:bot" cannot delete resource "configmaps" in API group "" in the namespace "${ns}"`,
            ),
          );
          return true;
        });
      }

      // auth can-i: the admin may, the token-file user only what its ClusterRoleBinding says.
      assert.equal((await inNs('auth', 'can-i', 'delete', 'deployments')).trim(), 'yes');
      assert.equal((await kubectl(['--token', 'viewer-token', 'auth', 'can-i', 'get', 'nodes'])).trim(), 'yes');
      // "no" is the answer on stdout, with exit code 1.
      await assert.rejects(
        kubectl(['--token', 'viewer-token', 'auth', 'can-i', 'list', 'pods', '-n', ns]),
        (err: Error) => {
          assert.equal((err.cause as { stdout?: string }).stdout?.trim(), 'no');
          return true;
        },
      );

      // apply, client-side then server-side; a second apply changes nothing.
      const applied = await kubectl(['apply', '-f', '-'], manifest(ns, '1'));
      assert.match(applied, /configmap\/applied created/);
      assert.match(applied, /deployment\.apps\/applied created/);
      assert.match(applied, /gadget\.kv\.example\.com\/applied created/);
      assert.match(await kubectl(['apply', '-f', '-'], manifest(ns, '1')), /configmap\/applied unchanged/);
      await kubectl(['apply', '--server-side', '--force-conflicts', '-f', '-'], manifest(ns, '2'));
      assert.deepEqual((await api('configmaps', 'applied')).data, { v: '2' });
      const gadget = await get(`/apis/kv.example.com/v1/namespaces/${ns}/gadgets/applied`);
      assert.deepEqual(gadget.spec, { size: 2 });

      // replace (what `edit` does), then the three patch types.
      const cm = JSON.parse(await inNs('get', 'configmap', 'cm', '-o', 'json')) as KubeObject;
      cm.data = { a: 'replaced' };
      await kubectl(['replace', '-f', '-'], JSON.stringify(cm));
      assert.deepEqual((await api('configmaps', 'cm')).data, { a: 'replaced' });
      await inNs('patch', 'configmap', 'cm', '--type=merge', '-p', '{"data":{"m":"1"}}');
      await inNs('patch', 'configmap', 'cm', '--type=json', '-p', '[{"op":"add","path":"/data/j","value":"2"}]');
      await inNs(
        'patch',
        'deployment',
        'web',
        '-p',
        '{"spec":{"template":{"spec":{"containers":[{"name":"nginx","image":"nginx:1.26"}]}}}}',
      );
      assert.deepEqual((await api('configmaps', 'cm')).data, { a: 'replaced', m: '1', j: '2' });
      const patched = await get(`/apis/apps/v1/namespaces/${ns}/deployments/web`);
      const containers = (
        patched.spec as { template: { spec: { containers: Array<{ name: string; image: string }> } } }
      ).template.spec.containers;
      assert.deepEqual(
        containers.map((c) => `${c.name}=${c.image}`),
        ['nginx=nginx:1.26'],
      );

      // scale: the scale subresource of a Deployment.
      assert.match(await inNs('scale', 'deployment', 'web', '--replicas=3'), /deployment\.apps\/web scaled/);
      const scaled = await get(`/apis/apps/v1/namespaces/${ns}/deployments/web/scale`);
      assert.deepEqual([scaled.kind, (scaled.spec as { replicas: number }).replicas], ['Scale', 3]);
      assert.equal((scaled.status as { selector: string }).selector, 'app=web');

      // get -w: the current state, then a change, then the watch is ended.
      const child = spawn(
        path,
        [
          '--kubeconfig',
          server.kubeconfig,
          '--cache-dir',
          cache,
          '-n',
          ns,
          'get',
          'configmap',
          'cm',
          '-w',
          '-o',
          'jsonpath={.data.m}{"\\n"}',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000 },
      );
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      try {
        await waitFor(`kubectl ${version} get -w to print the configmap`, () => out.split('\n').includes('1'));
        await inNs('patch', 'configmap', 'cm', '--type=merge', '-p', '{"data":{"m":"watched"}}');
        await waitFor(`kubectl ${version} get -w to print the change`, () => out.split('\n').includes('watched'));
      } finally {
        child.kill();
        await exited;
      }

      // delete --wait, an object and then the whole namespace.
      await inNs('delete', 'gadget', 'applied', '--wait');
      await inNs('delete', 'deployment', 'applied', '--wait');
      assert.equal((await server.request(`/apis/apps/v1/namespaces/${ns}/deployments/applied`)).status, 404);
      await kubectl(['delete', 'clusterrolebinding', `kv-${minor}`]);
      await kubectl(['delete', 'namespace', ns, '--wait', '--timeout=30s']);
      assert.equal((await server.request(`/api/v1/namespaces/${ns}`)).status, 404);
    });
  }
});
