/**
 * `raven dev` against a cloud it did not start (an OpenStack simulator the test runs, reached through a clouds.yaml
 * and OS_CLOUD, as a real cloud would be): it says so loudly before it makes anything, and on Ctrl-C it deletes
 * everything it made there (`--cleanup`, the default), leaving the operator's own resources alone.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from '../support/node-test.ts';
import type { Service } from '../../src/kube/api/index.ts';
import { KubeClient, loadConnection, resources } from '../../src/kube/client/index.ts';
import { runOpenStackSim, type RunningOpenStackSim } from '@raven/dev';
import { loadCloudConfig, NeutronClient, OctaviaClient, OpenStackSession } from '../../src/openstack/index.ts';
import { cleanEnv, spawnRaven, type RavenChild } from '../support/raven-cli.ts';
import { waitFor } from '../support/wait.ts';
const TAG = 'raven.cluster=dev';

describe('raven dev with a real cloud', { timeout: 120_000 }, () => {
  let dir: string;
  let sim: RunningOpenStackSim;
  let session: OpenStackSession;
  let child: RavenChild | undefined;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'raven-dev-cloud-'));
    sim = await runOpenStackSim({
      port: 0,
      provisioningDelayMs: 200,
      cloudsYamlOut: join(dir, 'cloud', 'clouds.yaml'),
    });
    session = new OpenStackSession({
      cloud: loadCloudConfig({ cloud: 'raven-sim', env: { OS_CLIENT_CONFIG_FILE: join(dir, 'cloud', 'clouds.yaml') } }),
    });
  });
  after(async () => {
    if (child?.proc.exitCode === null) child.proc.kill('SIGKILL');
    await session.close();
    await sim.close();
    await rm(dir, { recursive: true, force: true });
  });

  /** Everything of the dev cluster in the cloud: by tag, and by name for what carries no tag. */
  async function leftovers(): Promise<string[]> {
    const neutron = new NeutronClient(session);
    const octavia = new OctaviaClient(session);
    const mine = (r: { name?: string; tags?: readonly string[]; description?: string }) =>
      r.tags?.includes(TAG) || r.name?.startsWith('raven/dev/') || r.description?.startsWith('raven/dev/');
    const named = <T extends { id: string; name?: string }>(kind: string, list: T[]) =>
      list.filter(mine).map((r) => `${kind} ${r.name || r.id}`);
    return [
      ...named('network', await neutron.networks.list()),
      ...named('subnet', await neutron.subnets.list()),
      ...named('port', await neutron.ports.list()),
      ...named('router', await neutron.routers.list()),
      ...named('floating IP', await neutron.floatingIps.list()),
      ...named('load balancer', await octavia.loadBalancers.list()),
    ];
  }

  it('prints a loud notice, makes a router, networks, a port, a load balancer and a floating IP; Ctrl-C deletes them all', async () => {
    // The operator's external network: the router's gateway and the floating IPs come from it. It must survive.
    const neutron = new NeutronClient(session);
    const external = await neutron.networks.create({ name: 'public', 'router:external': true });
    await neutron.subnets.create({ network_id: external.id, cidr: '198.51.100.0/24', ip_version: 4, name: 'public' });

    const kubeconfig = join(dir, 'kubeconfig');
    const raven = spawnRaven(['dev', '--api-port', '0', '--kubeconfig-out', kubeconfig], {
      cwd: dir,
      env: cleanEnv({
        OS_CLIENT_CONFIG_FILE: join(dir, 'cloud', 'clouds.yaml'),
        OS_CLOUD: 'raven-sim',
        RAVEN_EXTERNAL_NETWORK_ID: external.id,
        RAVEN_LOG_LEVEL: 'warn',
      }),
    });
    child = raven;
    const { proc, exited } = raven;

    await waitFor('the banner', () => {
      if (proc.exitCode !== null) assert.fail(`raven dev exited (${proc.exitCode}):\n${raven.stdout}\n${raven.stderr}`);
      return raven.stdout.includes('Press Ctrl-C');
    });
    // Before the banner, and so before anything was made: which cloud, what goes there, what happens on exit.
    assert.match(
      raven.stderr,
      /^!! raven dev is using a REAL cloud: raven-sim \(.*clouds\.yaml\), not the simulator\.$/m,
    );
    assert.match(raven.stderr, /^!! It creates there, tagged raven\.cluster=dev and named raven\/dev\/…: a router, /m);
    assert.match(raven.stderr, /^!! On exit it deletes everything tagged raven\.cluster=dev there/m);
    assert.match(raven.stdout, /OpenStack: +cloud raven-sim/);

    const client = new KubeClient({ connection: await loadConnection({ kubeconfig }) });
    try {
      await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
      await client.create(
        resources.pods,
        {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'web', namespace: 'shop', labels: { app: 'web' } },
          spec: { containers: [{ name: 'web', image: 'nginx', ports: [{ containerPort: 80 }] }] },
        },
        { namespace: 'shop' },
      );
      await client.create(
        resources.services,
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web', namespace: 'shop' },
          spec: { type: 'LoadBalancer', selector: { app: 'web' }, ports: [{ port: 80, targetPort: 80 }] },
        },
        { namespace: 'shop' },
      );
      await waitFor(
        'the service ingress IP (load balancer ACTIVE, floating IP on it)',
        async () => {
          const svc = await client.get<Service>(resources.services, 'web', 'shop');
          return svc.status?.loadBalancer?.ingress?.[0]?.ip;
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
    } finally {
      await client.close();
    }
    const made = await leftovers();
    for (const kind of ['router', 'network', 'port', 'load balancer', 'floating IP'])
      assert.ok(
        made.some((m) => m.startsWith(`${kind} `)),
        `no ${kind} made:\n${made.join('\n')}`,
      );

    proc.kill('SIGINT');
    const exit = await Promise.race([
      exited,
      new Promise<'hung'>((resolve) => setTimeout(() => resolve('hung'), 60_000).unref()),
    ]);
    assert.deepEqual(exit, { code: 0, signal: null }, `${raven.stdout}\n${raven.stderr}`);
    assert.match(raven.stdout, /raven dev: deleting what cluster dev made in the cloud/);
    assert.match(raven.stdout, /cluster dev: nothing left\n$/);
    assert.deepEqual(await leftovers(), [], 'left in the cloud after raven dev stopped');
    // The operator's network is not Raven's: untouched, and nothing of Raven's is on it (gateway, floating IPs).
    assert.deepEqual(
      (await neutron.networks.list({ id: external.id })).map((n) => n.name),
      ['public'],
    );
    assert.deepEqual(
      (await neutron.ports.list({ network_id: external.id })).map((p) => `${p.device_owner} ${p.id}`),
      [],
    );
    process.stdout.write(`# raven dev made ${made.length} resources in the cloud; all gone after Ctrl-C\n`);
  });
});
