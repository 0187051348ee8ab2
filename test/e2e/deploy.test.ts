/**
 * deploy/: the manifests apply with kubectl 1.20 to the embedded API server exactly as written (it serves apps/v1 and
 * the RBAC kinds itself), the ConfigMap's
 * raven.yaml is a valid configuration, the pieces agree with each other (mounts, ports, Lease, service account), and
 * the RBAC rules are pinned in a table here, so that widening Raven's permissions is a conscious change to two files.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from '../support/node-test.ts';
import * as k8s from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { loadRavenConfig } from '../../src/daemon/config/index.ts';
import { loadCloudConfig } from '../../src/openstack/config/clouds.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const deployDir = new URL('../../deploy', import.meta.url).pathname;
const manifestFiles = readdirSync(deployDir)
  .filter((f) => /\.ya?ml$/.test(f))
  .sort();

type Obj = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
};

/** Every object of deploy/, as written, in apply order. */
const written: Obj[] = manifestFiles.flatMap((file) =>
  parseAllDocuments(readFileSync(join(deployDir, file), 'utf8'))
    .map((doc) => doc.toJS() as Obj)
    .filter((o) => o !== null),
);

/**
 * What Raven may do, cluster-wide and in raven-system: `group/resource` (core = `core`), `[name]` when limited to
 * one object → verbs. Exactly these, no more: change RBAC only together with this table.
 */
const clusterGrants: Record<string, string[]> = {
  'core/namespaces': ['get', 'list', 'patch', 'watch'],
  'core/pods': ['get', 'list', 'patch', 'watch'],
  'core/services': ['get', 'list', 'patch', 'update', 'watch'],
  'core/services/status': ['patch', 'update'],
  'core/endpoints': ['get', 'list', 'watch'],
  'core/nodes': ['get', 'list', 'watch'],
  'discovery.k8s.io/endpointslices': ['get', 'list', 'watch'],
  'networking.k8s.io/networkpolicies': ['get', 'list', 'watch'],
  'core/events': ['create', 'patch'],
  'events.k8s.io/events': ['create', 'patch'],
};
const leaderGrants: Record<string, string[]> = {
  'coordination.k8s.io/leases': ['create'],
  'coordination.k8s.io/leases[raven]': ['get', 'update'],
};

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs?: string[];
  nonResourceURLs?: string[];
}

/** A role's rules as `group/resource[name]` → sorted verbs; wildcards and non-resource URLs are refused outright. */
function grants(rules: Rule[]): Record<string, string[]> {
  const out: Record<string, Set<string>> = {};
  for (const rule of rules) {
    assert.equal(rule.nonResourceURLs, undefined, 'no non-resource URLs');
    for (const list of [rule.apiGroups, rule.resources, rule.verbs, rule.resourceNames])
      assert.ok(!list?.includes('*'), `no wildcards: ${JSON.stringify(rule)}`);
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        for (const name of rule.resourceNames ?? [undefined]) {
          const key = `${group || 'core'}/${resource}${name ? `[${name}]` : ''}`;
          for (const verb of rule.verbs ?? []) (out[key] ??= new Set()).add(verb);
        }
      }
    }
  }
  return Object.fromEntries(Object.entries(out).map(([k, v]) => [k, [...v].sort()]));
}

/**
 * `expected` (as written) is contained in `actual` (as served, with the server's additions): every field, same value.
 */
function assertContains(actual: unknown, expected: unknown, path: string): void {
  if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual), `${path}: expected a list`);
    assert.equal(actual.length, expected.length, `${path}: length`);
    expected.forEach((e, i) => assertContains(actual[i], e, `${path}[${i}]`));
  } else if (typeof expected === 'object' && expected !== null) {
    assert.ok(typeof actual === 'object' && actual !== null, `${path}: expected an object`);
    for (const [k, v] of Object.entries(expected))
      assertContains((actual as Record<string, unknown>)[k], v, `${path}.${k}`);
  } else {
    assert.equal(actual, expected, path);
  }
}

type Model = { getAttributeTypeMap?: () => Array<{ baseName: string; type: string }> };

/** Checks field names and scalar types against the client-node model `type` (e.g. `V1Deployment`), recursively. */
function checkFields(value: unknown, type: string, path: string, problems: string[]): void {
  const list = /^Array<(.+)>$/.exec(type);
  const map = /^\{ \[key: string\]: (.+); \}$/.exec(type);
  const model = (k8s as unknown as Record<string, Model | undefined>)[type];
  if (list) {
    if (!Array.isArray(value)) problems.push(`${path}: must be a list`);
    else value.forEach((v, i) => checkFields(v, list[1]!, `${path}[${i}]`, problems));
  } else if (map || model?.getAttributeTypeMap) {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return void problems.push(`${path}: must be an object (${type})`);
    const fields = new Map(model?.getAttributeTypeMap?.().map((a) => [a.baseName, a.type]));
    for (const [key, v] of Object.entries(value)) {
      const fieldType = map ? map[1]! : fields.get(key);
      if (fieldType === undefined) problems.push(`${path}.${key}: not a field of ${type}`);
      else checkFields(v, fieldType, `${path}.${key}`, problems);
    }
  } else if (['string', 'number', 'boolean'].includes(type) && typeof value !== type) {
    problems.push(`${path}: must be a ${type}`);
  } else if (type === 'IntOrString' && typeof value !== 'string' && typeof value !== 'number') {
    problems.push(`${path}: must be an integer or a string`);
  }
}

const find = (kind: string, name: string, objects: readonly Obj[] = written): Obj => {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `${kind} ${name} in deploy/`);
  return found;
};

describe('deploy/ manifests on the embedded API server', { timeout: 120_000 }, () => {
  let server: TestServer;
  let applied: string;
  let reapplied: string;
  let served: Obj[];
  let servedFirst: Obj[];

  before(async () => {
    server = await startTestServer();
    applied = await server.kubectl(['apply', '-f', deployDir]);
    servedFirst = (JSON.parse(await server.kubectl(['get', '-f', deployDir, '-o', 'json'])) as { items: Obj[] }).items;
    reapplied = await server.kubectl(['apply', '-f', deployDir]);
    served = (JSON.parse(await server.kubectl(['get', '-f', deployDir, '-o', 'json'])) as { items: Obj[] }).items;
  });
  after(async () => {
    await server.stop();
  });

  it('every object is well-formed: known fields of the right types (the Kubernetes models of @kubernetes/client-node)', () => {
    for (const object of written) {
      const problems: string[] = [];
      checkFields(object, `V1${object.kind}`, `${object.kind}/${object.metadata.name}`, problems);
      assert.deepEqual(problems, []);
    }
  });

  it('kubectl apply -f deploy/ creates every object; applying again changes nothing', () => {
    assert.deepEqual(manifestFiles, ['00-namespace.yaml', '10-rbac.yaml', '20-config.yaml', '30-deployment.yaml']);
    const lines = applied.trim().split('\n');
    assert.equal(lines.length, written.length, applied);
    for (const line of lines) assert.match(line, / created$/);
    assert.match(applied, /^deployment\.apps\/raven created$/m);
    assert.match(applied, /^clusterrole\.rbac\.authorization\.k8s\.io\/raven created$/m);
    // kubectl 1.20 says "configured" for a Secret written with stringData every time, as against a real server: its
    // three-way patch sends stringData again, since the server never returns it. Nothing changes all the same.
    for (const line of reapplied.trim().split('\n'))
      assert.match(line, line.startsWith('secret/') ? / (unchanged|configured)$/ : / unchanged$/);
    const versions = (items: Obj[]) =>
      items.map((o) => `${o.kind}/${o.metadata.name}@${(o.metadata as { resourceVersion?: string }).resourceVersion}`);
    assert.deepEqual(versions(served), versions(servedFirst));
  });

  it('every object is served as written', () => {
    assert.equal(served.length, written.length);
    for (const object of written) {
      const got = find(object.kind, object.metadata.name, served);
      const { stringData, ...rest } = object as Obj & { stringData?: Record<string, string> };
      assertContains(got, rest, `${object.kind}/${object.metadata.name}`);
      // stringData is write-only: folded into data (base64), as a real server does.
      assert.equal(got.stringData, undefined, `${object.kind}/${object.metadata.name}: stringData returned`);
      const data = got.data as Record<string, string> | undefined;
      for (const [key, value] of Object.entries(stringData ?? {}))
        assert.equal(Buffer.from(data?.[key] ?? '', 'base64').toString('utf8'), value, `Secret ${key}`);
    }
  });

  it('the Deployment: 2 replicas on different nodes, probes on the ops port, locked down, leader identity from the pod name', () => {
    const deployment = find('Deployment', 'raven', served) as Obj & { spec: DeploymentSpec };
    const spec = deployment.spec;
    assert.equal(spec.replicas, 2);
    const pod = spec.template.spec;
    const container = pod.containers[0]!;
    assert.deepEqual(container.args, ['run', '--config', '/etc/raven/raven.yaml']);
    assert.deepEqual(container.readinessProbe.httpGet, { path: '/readyz', port: 'ops' });
    assert.deepEqual(container.livenessProbe.httpGet, { path: '/healthz', port: 'ops' });
    assert.deepEqual(container.ports, [{ name: 'ops', containerPort: 9090, protocol: 'TCP' }]);
    const env = Object.fromEntries(container.env.map((e) => [e.name, e.value ?? e.valueFrom?.fieldRef?.fieldPath]));
    assert.equal(env.OS_CLIENT_CONFIG_FILE, '/etc/openstack/clouds.yaml');
    assert.equal(env.POD_NAME, 'metadata.name');
    assert.equal(env.NODE_OPTIONS, undefined, "the image's entrypoint sets Node.js's flags (docs/decisions.md §12)");
    assert.deepEqual(container.securityContext, {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
    });
    assert.equal(pod.securityContext.runAsNonRoot, true);
    assert.ok(
      container.resources.requests.cpu && container.resources.requests.memory && container.resources.limits.memory,
    );
    const anti = pod.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution;
    assert.deepEqual(anti, [
      { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: spec.selector.matchLabels } },
    ]);
    assert.deepEqual(spec.template.metadata.labels, spec.selector.matchLabels);
    assert.equal(pod.serviceAccountName, find('ServiceAccount', 'raven').metadata.name);
  });

  it("the ConfigMap's raven.yaml is a valid configuration that agrees with the other objects", async () => {
    const text = await server.kubectl([
      'get',
      'configmap',
      'raven-config',
      '-n',
      'raven-system',
      '-o',
      'jsonpath={.data.raven\\.yaml}',
    ]);
    const file = join(server.dir, 'raven.yaml');
    writeFileSync(file, text);
    // As in the pod: the service account's environment, POD_NAME from the downward API, nothing else set.
    const config = loadRavenConfig({
      file,
      env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443', POD_NAME: 'raven-5d9c7-abcde' },
    });
    assert.equal(config.kubernetes.inCluster, true);
    assert.equal(config.leaderElection.identity, 'raven-5d9c7-abcde');
    assert.equal(config.ops.host, '0.0.0.0');

    const deployment = find('Deployment', 'raven', served) as Obj & { spec: DeploymentSpec };
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0]!;
    assert.equal(container.ports[0]!.containerPort, config.ops.port, 'the probes reach the ops server');
    // The config file and clouds.yaml are where the args and OS_CLIENT_CONFIG_FILE say.
    const volume = (source: string, name: string) =>
      pod.volumes.find(
        (v) =>
          (v[source] as { name?: string; secretName?: string } | undefined)?.[
            source === 'secret' ? 'secretName' : 'name'
          ] === name,
      )?.name;
    const mountPath = (name: string | undefined) => container.volumeMounts.find((m) => m.name === name)?.mountPath;
    assert.equal(mountPath(volume('configMap', 'raven-config')), '/etc/raven');
    assert.equal(mountPath(volume('secret', 'raven-clouds')), '/etc/openstack');
    // The Lease is the one the Role lets Raven renew.
    const role = find('Role', 'raven-leader-election', served) as Obj & { rules: Rule[] };
    assert.equal(role.metadata.namespace, config.leaderElection.namespace);
    assert.ok(role.rules.some((r) => r.resourceNames?.includes(config.leaderElection.name)));
    // The Secret's placeholder clouds.yaml is well-formed, and holds the cloud the config names.
    const clouds = join(server.dir, 'clouds.yaml');
    writeFileSync(
      clouds,
      (find('Secret', 'raven-clouds') as Obj & { stringData: Record<string, string> }).stringData['clouds.yaml']!,
    );
    const cloud = loadCloudConfig({
      cloud: config.openstack.cloud,
      env: { OS_CLIENT_CONFIG_FILE: clouds },
      cwd: server.dir,
      homeDir: server.dir,
    });
    assert.equal(cloud.name, 'raven');
  });

  it('RBAC grants exactly the verbs in the table, to the raven service account', () => {
    assert.deepEqual(grants((find('ClusterRole', 'raven', served) as Obj & { rules: Rule[] }).rules), clusterGrants);
    assert.deepEqual(
      grants((find('Role', 'raven-leader-election', served) as Obj & { rules: Rule[] }).rules),
      leaderGrants,
    );
    const subject = [{ kind: 'ServiceAccount', name: 'raven', namespace: 'raven-system' }];
    for (const [kind, name, roleKind] of [
      ['ClusterRoleBinding', 'raven', 'ClusterRole'],
      ['RoleBinding', 'raven-leader-election', 'Role'],
    ] as const) {
      const binding = find(kind, name, served) as Obj & { roleRef: unknown; subjects: unknown };
      assert.deepEqual(binding.subjects, subject);
      assert.deepEqual(binding.roleRef, {
        apiGroup: 'rbac.authorization.k8s.io',
        kind: roleKind,
        name: roleKind === 'Role' ? 'raven-leader-election' : 'raven',
      });
    }
  });

  it('the Containerfile: node 20 slim, built with npm run build, ships the bundle only, non-root, the raven entrypoint', () => {
    const text = readFileSync(join(deployDir, 'Containerfile'), 'utf8');
    const lines = text.split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    assert.ok(lines.filter((l) => l.startsWith('FROM ')).every((l) => l.includes('node:20-bookworm-slim')));
    assert.match(text, /^RUN npm run build$/m);
    // The last stage: the bundle (dependencies inside), the launcher and package.json; no sources, no node_modules.
    const last = lines.slice(lines.findLastIndex((l) => l.startsWith('FROM ')));
    assert.deepEqual(
      last.filter((l) => l.startsWith('COPY ')).map((l) => l.split(/\s+/).slice(-2).join(' ')),
      ['/app/dist/raven ./dist/raven', 'bin/raven.js ./bin/', 'package.json ./'],
    );
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    assert.equal(pkg.dependencies.tsx, undefined, 'tsx would ship in the image as a production dependency');
    assert.match(text, /^USER [1-9]\d*:[1-9]\d*$/m);
    // node, V8's memory flags (docs/decisions.md §12), the launcher; then the command.
    const entrypoint = JSON.parse(lines.at(-2)!.replace(/^ENTRYPOINT /, '')) as string[];
    assert.equal(entrypoint[0], 'node');
    assert.equal(entrypoint.at(-1), 'bin/raven.js');
    const flags = entrypoint.slice(1, -1);
    assert.ok(flags.includes('--max-semi-space-size=1'), 'the young generation capped');
    assert.ok(lines.at(-1)!.startsWith('CMD ["run"'), lines.at(-1));
    // This Node.js takes every flag (an unknown one stops it with "bad option").
    const check = spawnSync(process.execPath, [...flags, '-e', '0'], { encoding: 'utf8' });
    assert.equal(check.status, 0, check.stderr);
    // Everything it copies from the build context (the repository root) exists.
    const root = new URL('../..', import.meta.url).pathname;
    for (const line of lines.filter((l) => l.startsWith('COPY ') && !l.includes('--from'))) {
      for (const source of line.split(/\s+/).slice(1, -1)) assert.ok(existsSync(join(root, source)), source);
    }
  });
});

interface Container {
  args: string[];
  env: Array<{ name: string; value?: string; valueFrom?: { fieldRef?: { fieldPath: string } } }>;
  ports: Array<{ name: string; containerPort: number; protocol: string }>;
  readinessProbe: { httpGet: unknown };
  livenessProbe: { httpGet: unknown };
  securityContext: unknown;
  resources: { requests: { cpu?: string; memory?: string }; limits: { memory?: string } };
  volumeMounts: Array<{ name: string; mountPath: string }>;
}

interface DeploymentSpec {
  replicas: number;
  selector: { matchLabels: Record<string, string> };
  template: {
    metadata: { labels: Record<string, string> };
    spec: {
      serviceAccountName: string;
      containers: Container[];
      volumes: Array<Record<string, unknown> & { name: string }>;
      securityContext: { runAsNonRoot?: boolean };
      affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: unknown } };
    };
  };
}
