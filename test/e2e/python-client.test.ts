// Debian's python3-kubernetes (22.6, importable only by /usr/bin/python3) against a real embedded API server:
// test/e2e/python/client_check.py drives it and prints a JSON summary; this test checks the summary and the server.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { after, before, describe, it } from '../support/node-test.ts';
import { promisify } from 'node:util';
import { startTestServer, type TestServer } from '../support/server.ts';

const run = promisify(execFile);
const script = new URL('./python/client_check.py', import.meta.url).pathname;

interface Summary {
  kubernetes_version: string;
  initial_namespaces: string[];
  namespace: { name: string; uid: string; phase: string };
  pod: { name: string; uid: string; resourceVersion: string; phase: string; restartPolicy: string };
  list_resource_version: string;
  listed_pods: string[];
  watch_events: Array<{ type: string; name: string; resourceVersion: string; annotations: Record<string, string> }>;
  watch_seconds: number;
  patched_labels: Record<string, string>;
  patched_containers: Array<{ name: string; image: string; command: string[] | null }>;
  json_patched_labels: Record<string, string>;
  expired_watch: { status?: number; reason?: string; events?: string[] };
  deleted: { kind: string; name: string };
  missing_pod: { status: number; reason: string; kind: string } | null;
}

interface Obj {
  metadata: {
    name: string;
    uid: string;
    resourceVersion: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: { containers: Array<{ name: string; image: string; command?: string[] }> };
  status?: { phase?: string };
}

/**
 * Debian's python3-kubernetes is installed by scripts/test-deps.sh when it runs as root (always under CI). Anywhere
 * else without it this suite is skipped with a note, except under CI, where a missing client is a failure.
 */
function pythonClientMissing(): string | false {
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import kubernetes'], { stdio: 'ignore' });
    return false;
  } catch {
    if (process.env.CI)
      throw new Error(
        'python3-kubernetes is not importable by /usr/bin/python3 under CI; scripts/test-deps.sh should have installed it',
      );
    return 'python3-kubernetes is not installed (sudo apt-get install python3-kubernetes)';
  }
}

describe('python3-kubernetes against the embedded API server', { skip: pythonClientMissing() }, () => {
  let server: TestServer;

  before(async () => {
    server = await startTestServer();
  });

  after(async () => {
    await server.stop();
  });

  async function get(path: string): Promise<Obj> {
    const res = await server.request(path, { signal: AbortSignal.timeout(10_000) });
    assert.equal(res.status, 200, `GET ${path}`);
    return (await res.json()) as Obj;
  }

  it('lists, creates, watches from a resourceVersion and patches', async () => {
    let stdout: string;
    try {
      ({ stdout } = await run('/usr/bin/python3', [script, server.kubeconfig, 'py-check'], { timeout: 60_000 }));
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      assert.fail(`client_check.py failed: ${e.stderr || e.message}`);
    }
    const summary = JSON.parse(stdout) as Summary;

    const version = (await (await server.request('/version', { signal: AbortSignal.timeout(10_000) })).json()) as {
      gitVersion: string;
    };
    assert.equal(summary.kubernetes_version, version.gitVersion);
    for (const name of ['default', 'kube-public', 'kube-system'])
      assert.ok(summary.initial_namespaces.includes(name), name);
    assert.ok(!summary.initial_namespaces.includes('py-check'));

    const ns = await get('/api/v1/namespaces/py-check');
    assert.deepEqual(summary.namespace, { name: 'py-check', uid: ns.metadata.uid, phase: 'Active' });

    const pod = await get('/api/v1/namespaces/py-check/pods/py-pod');
    assert.equal(summary.pod.uid, pod.metadata.uid);
    assert.deepEqual([summary.pod.phase, summary.pod.restartPolicy], ['Pending', 'Always']);
    assert.deepEqual(
      pod.spec?.containers.map((c) => [c.name, c.image, c.command]),
      [['main', 'busybox:1.37', ['sleep', '3600']]],
    );
    assert.deepEqual(summary.listed_pods, ['py-pod']);
    assert.equal(summary.list_resource_version, summary.pod.resourceVersion);

    // The watch from the list's resourceVersion (python sends watch=True) sees only the two later changes, in order.
    assert.deepEqual(
      summary.watch_events.map((e) => [e.type, e.name]),
      [
        ['MODIFIED', 'py-pod'],
        ['ADDED', 'py-pod-2'],
      ],
    );
    assert.deepEqual(summary.watch_events[0]?.annotations, { watched: 'yes' });
    const [modified, added] = summary.watch_events.map((e) => Number(e.resourceVersion));
    assert.ok(Number(summary.list_resource_version) < modified! && modified! < added!, 'resourceVersions increase');
    assert.ok(
      summary.watch_seconds < 5,
      `the watch ended when stopped, not at its timeout (${summary.watch_seconds} s)`,
    );

    // Strategic merge patch: `tier` added, `app: null` removed, the annotation from the first patch kept, the
    // container merged by name (its command kept).
    assert.deepEqual(summary.patched_labels, { tier: 'backend' });
    assert.deepEqual(summary.patched_containers, [{ name: 'main', image: 'busybox:1.37', command: ['sleep', '3600'] }]);
    assert.deepEqual(pod.metadata.labels, { tier: 'backend' });
    assert.equal(pod.metadata.annotations?.watched, 'yes');

    assert.deepEqual(summary.json_patched_labels, { json: 'patch' });
    assert.equal(summary.expired_watch.status, 410, JSON.stringify(summary.expired_watch));
    assert.match(summary.expired_watch.reason ?? '', /^Expired: too old resource version/);
    assert.deepEqual(summary.deleted, { kind: 'Pod', name: 'py-pod-2' });
    const gone = await server.request('/api/v1/namespaces/py-check/pods/py-pod-2', {
      signal: AbortSignal.timeout(10_000),
    });
    assert.equal(gone.status, 404);
    await gone.body?.cancel();
    const bump = await get('/api/v1/namespaces/py-check/configmaps/bump');
    assert.ok(bump.metadata.uid);

    assert.deepEqual(summary.missing_pod, { status: 404, reason: 'NotFound', kind: 'Status' });
  });
});
