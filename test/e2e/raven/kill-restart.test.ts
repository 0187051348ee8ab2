/**
 * Issue 5 "Faults": the controller SIGKILLed in the middle of a burst, three times, and restarted. Raven runs as a
 * child process (`controller-child.ts`); the API server and the OpenStack simulator live in this process, so they
 * survive every kill. Strategy `namespace`, so namespace networks are made across kills too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../support/node-test.ts';
import { POD_DEVICE_OWNER } from '../../../src/reconcilers/index.ts';
import { waitFor } from '../../support/wait.ts';
import {
  assertConverged,
  createNamespaces,
  createPods,
  deleteAllAndAssertClean,
  namespaceSubnets,
  ravenSettings,
  seeded,
  killChild,
  startControllerChild,
  startEnv,
  type ControllerChild,
  type Env,
} from './support.ts';

const SEED = Number(process.env.RAVEN_FAULT_SEED ?? 20_250_505);
const CLUSTER = 'kill';
const NAMESPACES = ['kill-a', 'kill-b', 'kill-c', 'kill-d'];

describe(`Raven killed with SIGKILL mid-burst and restarted (seed ${SEED})`, { timeout: 150_000 }, () => {
  let env: Env;
  let child: ControllerChild | undefined;
  let untagged: string[] = [];
  const random = seeded(SEED);

  before(async () => {
    env = await startEnv(SEED);
  });
  after(async () => {
    await killChild(child);
    await env.stop();
  });

  const startChild = (): ControllerChild => startControllerChild(env, ravenSettings(CLUSTER, 'namespace'));

  /** Pod ports in the simulator right now (read in process: cheap enough to poll every few ms). */
  const portCount = (): number =>
    [...env.sim.sim.neutron.ports.values()].filter((p) => p.device_owner === POD_DEVICE_OWNER).length;

  /**
   * Lets the child work until a seeded random number of new ports exists (between 10 % and 80 % of what is left), then
   * SIGKILLs it.
   */
  async function killMidBurst(total: number): Promise<{ before: number; target: number; at: number }> {
    const c = startChild();
    child = c;
    const start = portCount();
    const target = start + Math.max(1, Math.floor((total - start) * (0.1 + 0.7 * random())));
    await waitFor(
      `${target} pod ports before the kill (child stderr: ${c.stderr()})`,
      () => portCount() >= target || c.proc.exitCode !== null,
      { timeoutMs: 45_000, intervalMs: 5 },
    );
    assert.equal(c.proc.exitCode, null, `the controller exited by itself: ${c.stderr()}`);
    c.proc.kill('SIGKILL');
    await c.exited;
    return { before: start, target, at: portCount() };
  }

  it('converges with exactly one port per pod, no duplicate networks, and cleans everything up', async () => {
    await createNamespaces(env.client, NAMESPACES);
    await createPods(env.client, NAMESPACES, 120, 'first');
    const kills = [];
    kills.push(await killMidBurst(120));
    // While the controller is dead, a second burst arrives.
    await createPods(env.client, NAMESPACES, 80, 'second');
    kills.push(await killMidBurst(200));
    kills.push(await killMidBurst(200));

    child = startChild();
    const counts = await assertConverged(env, CLUSTER, NAMESPACES);
    assert.deepEqual(counts, { pods: 200, ports: 200 });
    // Each namespace has exactly one network (by name: an untagged leftover counts too), and its own subnet.
    for (const ns of NAMESPACES) {
      const nets = await env.neutron.networks.list({ name: `raven/${CLUSTER}/${ns}` });
      assert.equal(
        nets.length,
        1,
        `namespace ${ns} has ${nets.length} networks: ${nets.map((n) => `${n.id} tags=${n.tags.join(',')}`).join('; ')}`,
      );
    }
    const subnets = await namespaceSubnets(env.client, NAMESPACES);
    assert.equal(new Set(subnets).size, NAMESPACES.length);
    // Every Raven port carries its owner tags (a crash between the create and the tagging must be repaired).
    const ports = await env.neutron.ports.list({ device_owner: POD_DEVICE_OWNER });
    untagged = ports.filter((p) => !p.tags.includes(`raven.cluster=${CLUSTER}`)).map((p) => p.name);
    process.stdout.write(
      `# kills (ports before → target → at kill): ${kills.map((k) => `${k.before}→${k.target}→${k.at}`).join(', ')}; untagged ports ${untagged.length}\n`,
    );

    await deleteAllAndAssertClean(env, CLUSTER, NAMESPACES);
    child.proc.kill('SIGTERM');
    await child.exited;
  });

  // The port is created, then tagged in a second request (Zed drops tags in a port POST); a kill between the two leaves
  // an untagged port, which the pod reconciler adopts by device_id and must tag.
  it('every pod port carries its owner tags after the kills', () => {
    assert.deepEqual(untagged, [], `ports without owner tags after the kills: ${untagged.join(', ')}`);
  });
});
