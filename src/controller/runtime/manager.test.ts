import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { startTestServer, type TestServer, testConnection } from '../../../test/support/server.ts';
import { waitFor } from '../../../test/support/wait.ts';
import { RavenError } from '../../core/index.ts';
import type { KubeObject } from '../../kube/api/index.ts';
import { SharedInformerFactory } from '../../kube/cache/index.ts';
import { KubeClient, resources } from '../../kube/client/index.ts';
import type { Lease } from '../leader/index.ts';
import { Controller } from './controller.ts';
import type { HealthReport } from './health.ts';
import { LEADER_ANNOTATION, leaderManager } from '../../../test/support/manager-child.ts';
import { Manager } from './manager.ts';

const fast = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };
/** The longest jittered acquire retry: retryPeriod × 2.2. */
const maxRetryMs = 440;
const SEEN = 'raven.test/seen';
const failing = (report: HealthReport): string[] => report.checks.filter((c) => !c.ok).map((c) => c.name);
const isCode = (code: string) => (err: unknown) => err instanceof RavenError && err.code === code;
const aborted = (signal: AbortSignal): Promise<void> =>
  new Promise((resolve) =>
    signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
  );

describe('Manager against the API server', { timeout: 120_000 }, () => {
  let server: TestServer;
  let client: KubeClient;
  const stops: AbortController[] = [];
  const children: ChildProcess[] = [];

  before(async () => {
    server = await startTestServer();
    client = new KubeClient({
      connection: testConnection(server),
    });
  });
  after(async () => {
    for (const c of stops) c.abort();
    for (const child of children) child.kill('SIGKILL');
    await server.request('/_raven/faults/rules', { method: 'DELETE' }).then((r) => r.text());
    await sleep(100);
    await client.close();
    await server.stop();
  });

  const stopper = (): AbortController => {
    const c = new AbortController();
    stops.push(c);
    return c;
  };
  const namespace = async (name: string): Promise<string> => {
    await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    return name;
  };
  const create = (ns: string, name: string) =>
    client.create<KubeObject>(resources.configmaps, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns },
    });
  const annotation = async (ns: string, name: string, key: string) =>
    (await client.get(resources.configmaps, name, ns)).metadata.annotations?.[key];
  const holder = async (ns: string, name: string) =>
    (await client.get<Lease>(resources.leases, name, ns)).spec?.holderIdentity;
  const fault = async (rule: object): Promise<void> => {
    const res = await server.request('/_raven/faults/rules', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rule),
    });
    assert.ok(res.ok, await res.text());
  };
  /** A manager without leader election, with one ConfigMap informer in `ns` for a controller. */
  const plain = (ns: string, options: { shutdownTimeoutMs?: number; informersUnreadyAfterMs?: number } = {}) => {
    const informers = new SharedInformerFactory({ client, backoff: { initialMs: 20, maxMs: 200 } });
    return {
      manager: new Manager({ informers, ...options }),
      configmaps: informers.informerFor<KubeObject>(resources.configmaps, { namespace: ns }),
    };
  };

  it('a dozen informers watch on the one stop signal without a MaxListenersExceededWarning', async () => {
    const informers = new SharedInformerFactory({ client });
    for (let i = 0; i < 12; i++)
      informers.informerFor(resources.configmaps, { namespace: await namespace(`mgr-w${i}`) });
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    const stop = stopper();
    try {
      const manager = new Manager({ informers });
      const done = manager.start(stop.signal);
      await waitFor('synced', async () => (await manager.health.run('readyz')).ok);
      // Every informer's watch is open, each listening on the signal.
      await sleep(200);
      stop.abort();
      await done;
      assert.deepEqual(warnings, []);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('servers run from the start and stop after the runnables and the informers; closers run last', async () => {
    const ns = await namespace('mgr-servers');
    const informers = new SharedInformerFactory({ client });
    const configmaps = informers.informerFor(resources.configmaps, { namespace: ns });
    const manager = new Manager({ informers });
    const order: string[] = [];
    let informersStopped = false;
    manager.addServer({
      name: 'api',
      start: async (signal) => {
        order.push('server serving');
        await aborted(signal);
        order.push(`server stopping (informers ${informersStopped ? 'stopped' : 'running'})`);
      },
    });
    manager.add(
      {
        name: 'work',
        start: async (signal) => {
          order.push('work running');
          await aborted(signal);
          order.push('work stopped');
        },
      },
      { leaderOnly: false },
    );
    manager.closeOnStop(() => void order.push('closed'));
    const stop = stopper();
    const done = manager.start(stop.signal);
    // The factory's run of this informer (start() has begun it): resolves once the informers are stopped.
    void configmaps.run(stop.signal).then(() => (informersStopped = true));
    await waitFor('the work to run', () => order.includes('work running'));
    stop.abort();
    await done;
    assert.deepEqual(order, [
      'server serving',
      'work running',
      'work stopped',
      'server stopping (informers stopped)',
      'closed',
    ]);
  });

  it('without leader election: reconciles objects from before and after start, is ready once synced, stops on abort', async () => {
    const ns = await namespace('mgr-plain');
    const before = await create(ns, 'before');
    const { manager, configmaps } = plain(ns);
    manager.add(
      new Controller({
        name: 'seen',
        for: configmaps,
        reconcile: async (key, signal) => {
          const cm = configmaps.lister().get(key);
          // Our own patch comes back as an update: patch only while the annotation is missing, so this converges.
          if (!cm?.metadata.name || cm.metadata.annotations?.[SEEN] !== undefined) return;
          await client.patch(
            resources.configmaps,
            cm.metadata.name,
            ns,
            { metadata: { annotations: { [SEEN]: cm.metadata.resourceVersion } } },
            'merge',
            { signal },
          );
        },
      }),
    );
    // Hold the informer's first list, so the manager is observably unready while it syncs.
    await fault({ path: `/api/v1/namespaces/${ns}/configmaps`, method: 'GET', count: 1, delayMs: 300 });
    assert.deepEqual(failing(await manager.health.run('readyz')), ['informer-sync']);
    const stop = stopper();
    const done = manager.start(stop.signal);
    assert.deepEqual(failing(await manager.health.run('readyz')), ['informer-sync']);
    await waitFor('readyz to pass', async () => (await manager.health.run('readyz')).ok);
    assert.equal(manager.isLeader(), true, 'without an election the manager leads alone');
    const afterStart = await create(ns, 'after');
    for (const cm of [before, afterStart]) {
      const name = cm.metadata.name!;
      assert.equal(
        await waitFor(`${name} to be annotated`, () => annotation(ns, name, SEEN)),
        cm.metadata.resourceVersion,
      );
    }
    assert.ok((await manager.health.run('healthz')).ok);

    stop.abort();
    await done;
    assert.deepEqual(failing(await manager.health.run('readyz')), ['shutdown']);
    assert.equal(manager.isLeader(), false);
  });

  it('is unready while an informer has had no successful list or watch for informersUnreadyAfterMs, ready once it recovers', async () => {
    const ns = await namespace('mgr-stale');
    const { manager } = plain(ns, { informersUnreadyAfterMs: 400 });
    const stop = stopper();
    const done = manager.start(stop.signal);
    await waitFor('readyz to pass', async () => (await manager.health.run('readyz')).ok);
    // The informer's lists, checks and watches all fail from now on.
    await fault({ path: `/api/v1/namespaces/${ns}/configmaps`, method: 'GET', count: 100_000, status: 503 });
    const dropped = await server.request('/_raven/faults/drop-watches', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'abort' }),
    });
    assert.ok(dropped.ok, await dropped.text());
    const report = await waitFor('readyz to fail', async () => {
      const r = await manager.health.run('readyz');
      return !r.ok && r;
    });
    assert.deepEqual(failing(report), ['informers']);
    assert.match(
      report.checks.find((c) => c.name === 'informers')!.reason!,
      new RegExp(`^configmaps in ${ns}: no successful list or watch for \\d+\\.\\d s \\(.+\\)$`),
    );
    assert.ok((await manager.health.run('healthz')).ok, 'alive all along: a restart would not help');
    await server.request('/_raven/faults/rules', { method: 'DELETE' }).then((r) => r.text());
    await waitFor('readyz to pass again', async () => (await manager.health.run('readyz')).ok, { timeoutMs: 5_000 });
    stop.abort();
    await done;
  });

  it('a runnable that rejects stops the others, then start() rejects with its error', async () => {
    const { manager } = plain('default');
    const boom = new Error('boom');
    const steady = { aborted: false, settled: false };
    manager.add({
      name: 'steady',
      start: async (signal) => {
        await aborted(signal);
        steady.aborted = signal.aborted;
        await sleep(100); // a slow stop: start() must still wait for it
        steady.settled = true;
      },
    });
    manager.add({ name: 'failing', start: () => sleep(50).then(() => Promise.reject(boom)) }, { leaderOnly: false });
    await assert.rejects(manager.start(stopper().signal), (err) => err === boom);
    assert.deepEqual(steady, { aborted: true, settled: true });
  });

  it('a graceful stop lets the in-flight reconcile finish, its signal not aborted, before start() resolves', async () => {
    const ns = await namespace('mgr-drain');
    const { manager, configmaps } = plain(ns);
    const events: string[] = [];
    let release = (): void => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    manager.add(
      new Controller({
        name: 'slow',
        for: configmaps,
        reconcile: async (_key, signal) => {
          events.push('reconcile started');
          await gate;
          events.push(`reconcile done (aborted: ${signal.aborted})`);
        },
      }),
    );
    const stop = stopper();
    const done = manager.start(stop.signal).then(() => void events.push('start resolved'));
    await create(ns, 'slow');
    await waitFor('the reconcile to start', () => events.length > 0);
    stop.abort();
    await sleep(200); // room for start() to resolve too early
    events.push('released');
    release();
    await done;
    assert.deepEqual(events, ['reconcile started', 'released', 'reconcile done (aborted: false)', 'start resolved']);
  });

  const deadlines = [
    { what: "the manager's shutdown deadline", shutdownTimeoutMs: 150, reason: 'SHUTDOWN_TIMEOUT' },
    { what: "the controller's drain deadline", drainTimeoutMs: 150, reason: 'CONTROLLER_STOPPED' },
  ];
  for (const [i, d] of deadlines.entries()) {
    it(`past ${d.what}, a reconcile waiting for its signal is aborted and start() still resolves`, async () => {
      const ns = await namespace(`mgr-deadline-${i}`);
      const { manager, configmaps } = plain(ns, d.shutdownTimeoutMs ? { shutdownTimeoutMs: d.shutdownTimeoutMs } : {});
      let inFlight: AbortSignal | undefined;
      manager.add(
        new Controller({
          name: 'stubborn',
          for: configmaps,
          ...(d.drainTimeoutMs ? { drainTimeoutMs: d.drainTimeoutMs } : {}),
          reconcile: (_key, signal) => {
            inFlight = signal;
            return aborted(signal);
          },
        }),
      );
      const stop = stopper();
      const done = manager.start(stop.signal);
      await create(ns, 'stubborn');
      const signal = await waitFor('the reconcile to start', () => inFlight);
      stop.abort();
      await done;
      assert.ok(isCode(d.reason)(signal.reason), `aborted with ${String(signal.reason)}`);
    });
  }

  it('two managers on one Lease: one leads at a time, only its controller reconciles, a graceful stop hands over at once', async () => {
    const ns = await namespace('mgr-two');
    await create(ns, 'cm');
    const run = (identity: string) => {
      const stop = stopper();
      const m = leaderManager({ client, namespace: ns, lease: 'two', identity, ...fast });
      return { identity, stop, ...m, done: m.manager.start(stop.signal) };
    };
    const [a, b] = [run('a'), run('b')];
    const leading = () => [a, b].filter((m) => m.manager.isLeader()).length;
    let led = false;
    for (const end = Date.now() + 2000; Date.now() < end; await sleep(10)) {
      const n = leading();
      assert.ok(n <= 1, 'both lead');
      if (led) assert.equal(n, 1, 'nobody leads after one had acquired');
      led ||= n === 1;
    }
    assert.ok(led, 'nobody led');
    const [leader, standby] = a.manager.isLeader() ? [a, b] : [b, a];
    await waitFor(
      'the leader to stamp the ConfigMap',
      async () => (await annotation(ns, 'cm', LEADER_ANNOTATION)) === leader.identity,
    );
    assert.ok(leader.reconciles() > 0);
    assert.equal(standby.reconciles(), 0, 'the standby reconciled');

    const stoppedAt = Date.now();
    leader.stop.abort();
    await leader.done;
    assert.ok(['', standby.identity].includes((await holder(ns, 'two')) ?? ''), 'the Lease was not released');
    await waitFor('the standby to lead', () => standby.manager.isLeader(), { intervalMs: 10 });
    // Without the release it would wait ≥ the declared 2 s lease from its last observation (> 1.5 s from here).
    const took = Date.now() - stoppedAt;
    assert.ok(took < 1200, `took over ${took} ms after the stop`);
    await waitFor(
      'the new leader to stamp the ConfigMap',
      async () => (await annotation(ns, 'cm', LEADER_ANNOTATION)) === standby.identity,
    );
    standby.stop.abort();
    await standby.done;
    assert.equal(await holder(ns, 'two'), '');
  });

  it('a standby that wins the Lease while it stops starts no leader-only work (start() would not wait for it)', async () => {
    const ns = await namespace('mgr-late');
    const a = leaderManager({ client, namespace: ns, lease: 'late', identity: 'a', ...fast });
    const aStop = stopper();
    const aDone = a.manager.start(aStop.signal);
    await waitFor('a to lead', () => a.manager.isLeader());
    const b = new Manager({
      informers: new SharedInformerFactory({ client }),
      leaderElection: { client, namespace: ns, name: 'late', identity: 'b', ...fast },
    });
    const work = { started: false, settled: false };
    b.add({
      name: 'work',
      start: async (signal) => {
        work.started = true;
        await aborted(signal);
        await sleep(1500);
        work.settled = true;
      },
    });
    // Its slow drain keeps b's election running well past a's release: b acquires while stopping.
    b.add({ name: 'slow-stop', start: (signal) => aborted(signal).then(() => sleep(1000)) }, { leaderOnly: false });
    const bStop = stopper();
    const bDone = b.start(bStop.signal);
    await waitFor('b to sync (its election starts then)', async () => (await b.health.run('readyz')).ok);
    bStop.abort();
    aStop.abort();
    await aDone;
    await bDone;
    assert.ok(!work.started || work.settled, 'leader-only work still runs after start() resolved');
    assert.equal(await holder(ns, 'late'), '');
  });

  it('a SIGKILLed leader process is replaced within a lease + a few retries; SIGTERM stops the other cleanly and releases', async () => {
    const ns = await namespace('mgr-kill');
    const spawnChild = (identity: string) => {
      const config = {
        server: server.url,
        ca: server.caPem,
        token: server.token,
        namespace: ns,
        lease: 'killed',
        identity,
        ...fast,
      };
      const proc = spawn(
        process.execPath,
        ['--import', 'tsx', new URL('../../../test/support/manager-child.ts', import.meta.url).pathname],
        {
          env: { ...process.env, RAVEN_MANAGER: JSON.stringify(config) },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      children.push(proc);
      const kid = {
        identity,
        proc,
        out: '',
        exit: new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code))),
      };
      proc.stdout.on('data', (d: Buffer) => void (kid.out += d.toString()));
      return kid;
    };
    const kids = [spawnChild('p1'), spawnChild('p2')];
    await waitFor(
      'both to sync and one to lead',
      () => kids.every((k) => k.out.includes('READY')) && kids.some((k) => k.out.includes('LEADING')),
      { timeoutMs: 30_000 },
    );
    const [leader, survivor] = kids[0]!.out.includes('LEADING') ? [kids[0]!, kids[1]!] : [kids[1]!, kids[0]!];
    await create(ns, 'first');
    await waitFor(
      'the leader to stamp',
      async () => (await annotation(ns, 'first', LEADER_ANNOTATION)) === leader.identity,
    );

    leader.proc.kill('SIGKILL');
    const killedAt = Date.now();
    assert.equal(await holder(ns, 'killed'), leader.identity, 'a killed process cannot release');
    await waitFor('the survivor to lead', () => survivor.out.includes('LEADING'), {
      timeoutMs: 10_000,
      intervalMs: 10,
    });
    const took = Date.now() - killedAt;
    // The Lease declares ceil(1.5 s) = 2 s, counted from the survivor's last observation; then jittered retries (≤ 440
    // ms each) and load.
    assert.ok(took < 2000 + 4 * maxRetryMs, `took over ${took} ms after the kill`);
    await create(ns, 'second');
    for (const name of ['first', 'second']) {
      await waitFor(
        `${name} stamped by the survivor`,
        async () => (await annotation(ns, name, LEADER_ANNOTATION)) === survivor.identity,
      );
    }

    survivor.proc.kill('SIGTERM');
    assert.equal(await survivor.exit, 0, survivor.out);
    assert.match(survivor.out, /^STOPPED$/m);
    assert.equal(await holder(ns, 'killed'), '');
  });

  it('losing the Lease aborts in-flight leader work at once and fails start() with LEADER_LOST', async () => {
    const ns = await namespace('mgr-lost');
    let inFlight: AbortSignal | undefined;
    const { manager } = leaderManager({
      client,
      namespace: ns,
      lease: 'lost',
      identity: 'solo',
      ...fast,
      reconcile: (_key, signal) => {
        inFlight = signal;
        return aborted(signal);
      },
    });
    const done = manager.start(stopper().signal);
    await create(ns, 'busy');
    const signal = await waitFor('a reconcile in flight', () => inFlight);
    assert.equal(manager.isLeader(), true);
    // Renewals fail from now on; the drain deadlines (5 s, 30 s) are far past the test's bounded wait below.
    for (const method of ['PUT', 'PATCH'])
      await fault({
        path: `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/lost`,
        method,
        count: 1000,
        status: 500,
      });
    const failedAt = Date.now();
    await assert.rejects(done, isCode('LEADER_LOST'));
    const took = Date.now() - failedAt;
    assert.ok(
      took < fast.retryPeriodMs + fast.renewDeadlineMs + 1000,
      `stopped ${took} ms after renewals began to fail`,
    );
    assert.ok(isCode('LEADERSHIP_LOST')(signal.reason), `aborted with ${String(signal.reason)}`);
    assert.equal(manager.isLeader(), false);
  });
});
