/**
 * `raven run` as deploy/ runs it: with the `raven` ServiceAccount's token (minted by the TokenRequest API), not the
 * admin's, against the embedded API server with RBAC on and deploy/'s manifests applied. The translation converges
 * — pods wired, a LoadBalancer service with its members and ingress, Events, the leader-election Lease — which proves
 * deploy/10-rbac.yaml is sufficient; then a rule taken away shows up as the API server's 403 in Raven's logs and as
 * Raven not ready.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, it } from '../../support/node-test.ts';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '../../../src/core/index.ts';
import { ClusterSimulator } from '@raven/cluster-sim';
import { writeKubeconfig } from '@raven/dev';
import { SharedInformerFactory } from '../../../src/kube/cache/index.ts';
import type { KubeObject } from '../../../src/kube/api/index.ts';
import { resources } from '../../../src/kube/client/index.ts';
import { OctaviaClient, provisioningState } from '../../../src/openstack/index.ts';
import { ensureDevExternalNetwork } from '@raven/dev';
import { parseVif, VIF_ANNOTATION } from '../../../src/reconcilers/index.ts';
import { ok } from '../../support/api.ts';
import { testConnection } from '../../support/server.ts';
import { waitFor } from '../../support/wait.ts';
import { newKubeClient, ravenSettings, startEnv, type Env } from './support.ts';

const ravenBin = fileURLToPath(new URL('../../../bin/raven.js', import.meta.url));
const deployDir = fileURLToPath(new URL('../../../deploy', import.meta.url));
const CLUSTER = 'sa';

interface Raven {
  proc: ChildProcess;
  log: () => string;
  opsUrl: Promise<string>;
  stop(): Promise<void>;
}

describe('raven run with the deploy/ ServiceAccount token, RBAC on', { timeout: 180_000 }, () => {
  let env: Env;
  let kubeconfig: string;
  let stopCluster: (() => Promise<void>) | undefined;

  before(async () => {
    env = await startEnv(7_070, { authorizationMode: 'RBAC' });
    await env.server.kubectl(['apply', '-f', deployDir]);
    const request = await ok(env.server, 'POST', '/api/v1/namespaces/raven-system/serviceaccounts/raven/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    });
    const token = (request.status as { token: string }).token;
    kubeconfig = join(env.server.dir, 'raven-sa.kubeconfig');
    await writeKubeconfig(kubeconfig, {
      server: env.server.url,
      token,
      ...(env.server.caPem ? { caPem: env.server.caPem } : {}),
    });
    // The rest of the cluster (nodes, scheduler, kubelet, EndpointSlices) acts as the control plane: admin.
    const simClient = newKubeClient(env.server);
    const abort = new AbortController();
    const cluster = new ClusterSimulator({
      client: simClient,
      connection: testConnection(env.server),
      informers: new SharedInformerFactory({ client: simClient }),
      logger: silentLogger,
      deleteGraceMs: 200,
    });
    const running = cluster.run(abort.signal);
    stopCluster = async () => {
      abort.abort();
      await running.catch(() => undefined);
      await simClient.close();
    };
  });
  after(async () => {
    await stopCluster?.();
    await env.stop();
  });

  function startRaven(externalNetworkId: string): Raven {
    const { NODE_TEST_CONTEXT: _t, NODE_OPTIONS: _o, ...inherited } = process.env;
    const proc = spawn(process.execPath, [ravenBin, 'run', '--kubeconfig', kubeconfig], {
      env: {
        ...Object.fromEntries(
          Object.entries(inherited).filter(
            ([k]) => !k.startsWith('RAVEN_') && !k.startsWith('OS_') && k !== 'KUBECONFIG',
          ),
        ),
        ...ravenSettings(CLUSTER, 'namespace'),
        // As deploy/20-config.yaml: leader election on the Lease the Role allows.
        RAVEN_LEADER_ELECT: 'true',
        RAVEN_LEADER_ELECT_NAMESPACE: 'raven-system',
        RAVEN_LEADER_IDENTITY: 'raven-sa-test',
        RAVEN_EXTERNAL_NETWORK_ID: externalNetworkId,
        RAVEN_LOG_LEVEL: 'info',
        OS_CLIENT_CONFIG_FILE: env.cloudsYaml,
        OS_CLOUD: 'raven-sim',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    proc.stdout.on('data', (c: Buffer) => (log += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (log += c.toString()));
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    const opsUrl = waitFor('raven ops url', () => /"url":"(http:\/\/[^"]+)"[^\n]*ops endpoints/.exec(log)?.[1], {
      timeoutMs: 30_000,
    });
    return {
      proc,
      log: () => log,
      opsUrl,
      async stop() {
        if (proc.exitCode === null) proc.kill('SIGTERM');
        await exited;
      },
    };
  }

  const readyz = async (raven: Raven) => {
    const res = await fetch(`${await raven.opsUrl}/readyz?verbose`);
    return { status: res.status, text: await res.text() };
  };

  it('converges with only the permissions deploy/10-rbac.yaml grants, and never gets a 403', async () => {
    const externalNetworkId = await ensureDevExternalNetwork(env.neutron);
    const raven = startRaven(externalNetworkId);
    try {
      const { client } = env;
      const ns = 'sa-shop';
      await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      for (const name of ['web-0', 'web-1'])
        await client.create(
          resources.pods,
          {
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { name, namespace: ns, labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'nginx', ports: [{ name: 'http', containerPort: 8080 }] }] },
          },
          { namespace: ns },
        );
      const svc = await client.create(
        resources.services,
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web', namespace: ns },
          spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ port: 80, targetPort: 'http' }] },
        },
        { namespace: ns },
      );
      const pods = await waitFor(
        'both pods Running with the address of their port',
        async () => {
          const items = (await client.list(resources.pods, { namespace: ns })).items;
          return items.length === 2 &&
            items.every(
              (p) => parseVif(p.metadata.annotations?.[VIF_ANNOTATION]) && (p.status as { podIP?: string }).podIP,
            )
            ? items
            : undefined;
        },
        { timeoutMs: 60_000 },
      );
      for (const pod of pods) {
        const vif = parseVif(pod.metadata.annotations?.[VIF_ANNOTATION])!;
        const port = await env.neutron.ports.get(vif.portId);
        assert.equal(port.device_id, pod.metadata.uid);
        assert.equal((pod.status as { podIP: string }).podIP, port.fixed_ips[0]!.ip_address);
      }
      const octavia = new OctaviaClient(env.session);
      await waitFor(
        'the load balancer ACTIVE with both members, and the ingress IP on the service',
        async () => {
          const [lb] = await octavia.loadBalancers.list({ name: `raven/${CLUSTER}/${ns}/web` });
          if (!lb || provisioningState(lb).state !== 'ACTIVE') return false;
          const live = (await client.get(resources.services, 'web', ns)) as KubeObject;
          const ingress = (live.status as { loadBalancer?: { ingress?: unknown[] } }).loadBalancer?.ingress ?? [];
          return ingress.length === 1 && lb.vip_address === (svc.spec as { clusterIP: string }).clusterIP;
        },
        { timeoutMs: 60_000 },
      );
      const events = (await client.list(resources.events, { namespace: ns })).items;
      assert.ok(
        events.some((e) => (e as { reason?: string }).reason === 'PortCreated'),
        'Raven recorded its Events',
      );
      const lease = await ok(env.server, 'GET', '/apis/coordination.k8s.io/v1/namespaces/raven-system/leases/raven');
      assert.equal((lease.spec as { holderIdentity: string }).holderIdentity, 'raven-sa-test');
      assert.equal((await readyz(raven)).status, 200);
      assert.doesNotMatch(raven.log(), /forbidden/i, 'Raven met a 403 with the deploy/ permissions');
      assert.doesNotMatch(raven.log(), new RegExp(kubeconfigToken()), 'the token reached the logs');
    } finally {
      await raven.stop();
    }
  });

  it('without the EndpointSlice rule: the 403 is in its logs, and it is not ready', async () => {
    const role = await ok(env.server, 'GET', '/apis/rbac.authorization.k8s.io/v1/clusterroles/raven');
    const rules = (role.rules as Array<{ apiGroups: string[] }>).filter(
      (r) => !r.apiGroups.includes('discovery.k8s.io'),
    );
    assert.equal(rules.length, (role.rules as unknown[]).length - 1);
    await ok(env.server, 'PUT', '/apis/rbac.authorization.k8s.io/v1/clusterroles/raven', { ...role, rules });
    const raven = startRaven(await ensureDevExternalNetwork(env.neutron));
    try {
      await waitFor(
        "the API server's 403 in Raven's log",
        () =>
          raven
            .log()
            .includes(
              'endpointslices.discovery.k8s.io is forbidden: User \\"system:serviceaccount:raven-system:raven\\" cannot list resource \\"endpointslices\\" in API group \\"discovery.k8s.io\\" at the cluster scope',
            ),
        { timeoutMs: 30_000 },
      );
      const ready = await readyz(raven);
      assert.equal(ready.status, 500);
      assert.match(ready.text, /\[-\]informer-sync failed: caches have not synced yet/);
    } finally {
      await raven.stop();
    }
  });

  function kubeconfigToken(): string {
    return 'eyJ[\\w-]+\\.[\\w-]+\\.[\\w-]+';
  }
});
