/**
 * kustomize/: the overlays (dev, ha, ovn, signed-vifs) over deploy/ (the base, by its `Kustomization`) build with a real kubectl's
 * kustomize and pass `kubectl apply -k … --dry-run=server` on the embedded API server (which stores nothing), each
 * changing what it says: replicas, the log level, the Octavia provider (a valid configuration with the base's file).
 * kubectl 1.20 cannot: its server dry run looks each kind up in /openapi/v2, which the embedded server leaves empty;
 * the newest kubectl next to the gcloud SDK (1.27–1.33, as kubectl-versions.test.ts) is used, skipped when absent.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { after, before, describe, it } from '../support/node-test.ts';
import { parse, parseAllDocuments } from 'yaml';
import { loadRavenConfig } from '../../src/daemon/config/index.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const root = new URL('../../', import.meta.url).pathname;
const kubectl = [33, 32, 31, 30, 29, 28, 27]
  .map((minor) => `/usr/lib/google-cloud-sdk/bin/kubectl.1.${minor}`)
  .find((path) => existsSync(path));
const run = promisify(execFile);
const overlaysDir = `${root}kustomize/overlays`;

interface Container {
  name: string;
  env?: { name: string; value?: string }[];
  volumeMounts?: { name: string; mountPath: string }[];
}
type Obj = {
  kind: string;
  metadata: { name: string; namespace?: string };
  spec?: {
    replicas?: number;
    template?: {
      spec?: { containers?: Container[]; volumes?: { name: string; secret?: { secretName: string } }[] };
    };
  };
  data?: Record<string, string>;
};

describe(
  'kustomize overlays on the embedded API server',
  { timeout: 120_000, skip: kubectl ? false : 'no kubectl ≥ 1.27' },
  () => {
    let server: TestServer;
    before(async () => {
      server = await startTestServer();
      // A server-side dry run still needs the namespace of what it would create (NamespaceLifecycle).
      await server.kubectl(['create', 'namespace', 'raven-system']);
    });
    after(() => server.stop());

    /** Runs the kubectl found above against the server; rejects with its stderr. */
    async function kubectlNew(args: string[]): Promise<string> {
      const cache = `${server.dir}/kube-cache-new`;
      try {
        const opts = { timeout: 30_000, maxBuffer: 16 << 20 };
        return (await run(kubectl!, ['--kubeconfig', server.kubeconfig, '--cache-dir', cache, ...args], opts)).stdout;
      } catch (err) {
        throw new Error(`kubectl ${args.join(' ')}: ${(err as { stderr?: string }).stderr ?? String(err)}`, {
          cause: err,
        });
      }
    }

    /** `kubectl apply -k <overlay> --dry-run=server -o yaml`: what the server would store. */
    async function dryRun(overlay: string): Promise<Obj[]> {
      const out = await kubectlNew(['apply', '-k', `${overlaysDir}/${overlay}`, '--dry-run=server', '-o', 'yaml']);
      const docs = parseAllDocuments(out).map((d) => d.toJS() as Obj & { items?: Obj[] });
      return docs.flatMap((d) => (d.kind === 'List' ? (d.items ?? []) : [d]));
    }

    const deployment = (objects: Obj[]) => objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'raven')!;
    const env = (objects: Obj[]) =>
      Object.fromEntries(
        (deployment(objects).spec?.template?.spec?.containers?.find((c) => c.name === 'raven')?.env ?? []).map((e) => [
          e.name,
          e.value,
        ]),
      );
    /** The configuration the pod would load: the ConfigMap's file under the container's environment. */
    function config(objects: Obj[]) {
      const file = `${server.dir}/raven.yaml`;
      const text = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'raven-config')!.data![
        'raven.yaml'
      ]!;
      writeFileSync(file, text);
      const vars = Object.entries(env(objects)).filter((e): e is [string, string] => e[1] !== undefined);
      return loadRavenConfig({ file, env: Object.fromEntries(vars) });
    }

    it('the base (deploy/Kustomization) lists every manifest of deploy/, which kubectl apply -f deploy/ applies', () => {
      const base = parse(readFileSync(`${root}deploy/Kustomization`, 'utf8')) as { resources: string[] };
      const manifests = readdirSync(`${root}deploy`).filter((f) => /\.ya?ml$/.test(f));
      assert.deepEqual([...base.resources].sort(), manifests.sort());
    });

    it('there are exactly the overlays dev, ha, ovn and signed-vifs', () => {
      assert.deepEqual(readdirSync(overlaysDir).sort(), ['dev', 'ha', 'ovn', 'signed-vifs']);
    });

    it('dev: one replica, debug logs', async () => {
      const objects = await dryRun('dev');
      assert.equal(deployment(objects).spec?.replicas, 1);
      assert.equal(config(objects).logLevel, 'debug');
    });

    it('ha: three replicas', async () => {
      assert.equal(deployment(await dryRun('ha')).spec?.replicas, 3);
    });

    it("signed-vifs: the key from the Secret raven-vif-key as vif.keyFile, the base's mounts kept", async () => {
      const objects = await dryRun('signed-vifs');
      assert.equal(config(objects).vif.keyFile, '/etc/raven-vif/vif.key');
      const pod = deployment(objects).spec!.template!.spec!;
      const mounts = pod.containers!.find((c) => c.name === 'raven')!.volumeMounts!;
      assert.deepEqual(mounts.map((m) => m.mountPath).sort(), ['/etc/openstack', '/etc/raven', '/etc/raven-vif']);
      assert.deepEqual(
        pod.volumes!.find((v) => v.name === mounts.find((m) => m.mountPath === '/etc/raven-vif')!.name)!.secret,
        { secretName: 'raven-vif-key', defaultMode: 0o440 },
      );
    });

    it("ovn: the ovn provider, the rest as the base's", async () => {
      const objects = await dryRun('ovn');
      assert.equal(deployment(objects).spec?.replicas, 2);
      const loaded = config(objects);
      assert.equal(loaded.loadBalancer.provider, 'ovn');
      assert.equal(loaded.clusterId, 'my-cluster');
      // Every object of the base is there, and none was stored (a dry run).
      assert.deepEqual(
        objects.map((o) => o.kind).sort(),
        parseAllDocuments(await kubectlNew(['kustomize', `${root}deploy`]))
          .map((d) => (d.toJS() as Obj).kind)
          .sort(),
      );
      await assert.rejects(kubectlNew(['-n', 'raven-system', 'get', 'deployment', 'raven']), /NotFound|not found/);
    });
  },
);
