import { setMaxListeners } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import assert from 'node:assert/strict';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { FakeClock, RavenError } from '../../core/index.ts';
import type { KubeObject } from '../../kube/api/index.ts';
import { SharedInformer, SharedInformerFactory } from '../../kube/cache/index.ts';
import { KubeClient, resources } from '../../kube/client/index.ts';
import { startTestServer, type TestServer, testConnection } from '../../../test/support/server.ts';
import { waitFor } from '../../../test/support/wait.ts';
import { EventRecorder } from '../events/index.ts';
import { ItemExponentialFailureRateLimiter } from '../workqueue/index.ts';
import { Controller, type ControllerOptions } from './controller.ts';
import { ControllerBuilder, newControllerManagedBy } from './builder.ts';
import { Manager } from './manager.ts';
import { EventChannel } from './source.ts';
import { RetryableError, TerminalError, type Reconciler } from './result.ts';

const cm = (ns: string, name: string, data: Record<string, string> = {}): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns },
  data,
});
const tick = () => new Promise<void>((r) => setImmediate(r));

/** Lets pending promise chains (a reconcile, the queue hand-off) run. */
async function settle(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await tick();
}

/** Asserts that attempt n+2 comes exactly `delays[n]` ms (fake clock) after attempt n+1, and not 1 ms earlier. */
async function assertRetriesAfter(clock: FakeClock, attempts: () => number, delays: readonly number[]): Promise<void> {
  await waitFor('first attempt', () => attempts() === 1);
  for (const [i, delay] of delays.entries()) {
    const n = i + 2;
    clock.advance(delay - 1);
    await settle();
    assert.equal(attempts(), n - 1, `attempt ${n} came before its ${delay} ms back-off`);
    clock.advance(1);
    await waitFor(`attempt ${n}`, () => attempts() === n);
  }
}

describe('Controller against the embedded API server', { timeout: 120_000 }, () => {
  let server: TestServer;
  let client: KubeClient;
  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  const runs: Promise<void>[] = [];

  before(async () => {
    server = await startTestServer();
    client = new KubeClient({
      connection: testConnection(server),
      qps: 5_000,
      burst: 5_000,
    });
  });
  after(async () => {
    stop.abort();
    await Promise.all(runs);
    await client.close();
    await server.stop();
  });

  /** A namespace with a synced informer on its ConfigMaps. */
  async function scenario(ns: string): Promise<SharedInformer<KubeObject>> {
    await client.create(resources.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const informer = new SharedInformer<KubeObject>({ client, resource: resources.configmaps, namespace: ns });
    runs.push(informer.run(stop.signal));
    assert.ok(await informer.waitForSync(AbortSignal.timeout(10_000)));
    return informer;
  }

  function run<T extends KubeObject>(
    options: ControllerOptions<T>,
  ): { controller: Controller<T>; stop: AbortController; done: Promise<void> } {
    const controller = new Controller(options);
    const ctl = new AbortController();
    stop.signal.addEventListener('abort', () => ctl.abort(), { once: true });
    const done = controller.start(ctl.signal);
    runs.push(done);
    return { controller, stop: ctl, done };
  }

  const eventsFor = async (ns: string, name: string) =>
    (await client.list(resources.events, { namespace: ns, fieldSelector: `involvedObject.name=${name}` })).items;

  it('1,000 keys × 5 updates: each key reconciled, never by two workers at once, and its final state seen', async () => {
    const ns = 'many';
    const informer = await scenario(ns);
    const inFlight = new Set<string>();
    const overlaps: string[] = [];
    const seen = new Map<string, string>();
    let reconciles = 0;
    const reconcile: Reconciler = async (key) => {
      if (inFlight.has(key)) overlaps.push(key);
      inFlight.add(key);
      reconciles++;
      try {
        await tick(); // give another worker the chance to take the same key, if the queue allowed it
        const obj = informer.lister().get(key);
        seen.set(key, obj?.metadata.resourceVersion ?? 'gone');
      } finally {
        inFlight.delete(key);
      }
    };
    const { controller } = run({ name: 'many', for: informer, reconcile, workers: 8 });
    const names = Array.from({ length: 1000 }, (_, i) => `cm-${i}`);
    const final = new Map<string, string>();
    // 25 writers; each writes its share of keys, every key created then updated 5 times.
    await Promise.all(
      Array.from({ length: 25 }, async (_, w) => {
        for (let i = w; i < names.length; i += 25) {
          let obj = await client.create(resources.configmaps, cm(ns, names[i]!), { namespace: ns });
          for (let u = 1; u <= 5; u++)
            obj = await client.update(resources.configmaps, { ...obj, data: { u: String(u) } }, { namespace: ns });
          final.set(`${ns}/${names[i]}`, obj.metadata.resourceVersion!);
        }
      }),
    );
    await waitFor(
      'every key reconciled at its final resourceVersion',
      () => [...final].every(([k, rv]) => seen.get(k) === rv),
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(overlaps, [], 'a key was reconciled by two workers at once');
    assert.equal(seen.size, 1000);
    // Dedup: fewer reconciles than the 6,000 changes, and at least one per key.
    assert.ok(reconciles >= 1000 && reconciles <= 6000, `reconciles: ${reconciles}`);
    assert.equal(controller.health(), undefined);
  });

  it('a reconcile may wait on many requests at once: no MaxListenersExceededWarning on its signal', async () => {
    const informer = await scenario('wide');
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      let done = false;
      const reconcile: Reconciler = async (_key, signal) => {
        // Twenty requests in flight on the reconcile's signal, as a refill's parallel tag PUTs are.
        await Promise.all(
          Array.from(
            { length: 20 },
            () =>
              new Promise<void>((resolve) => {
                const onAbort = () => resolve();
                signal.addEventListener('abort', onAbort, { once: true });
                setImmediate(() => {
                  signal.removeEventListener('abort', onAbort);
                  resolve();
                });
              }),
          ),
        );
        done = true;
      };
      run({ name: 'wide', for: informer, reconcile, workers: 1 });
      await client.create(resources.configmaps, cm('wide', 'one'), { namespace: 'wide' });
      await waitFor('the reconcile done', () => done);
      await settle();
      assert.deepEqual(warnings, []);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('a failing reconcile backs off (5 ms · 2ⁿ), records a Warning Event, and recovers', async () => {
    const ns = 'failing';
    const informer = await scenario(ns);
    await client.create(resources.configmaps, cm(ns, 'flaky'), { namespace: ns });
    const clock = new FakeClock(Date.now());
    const recorder = new EventRecorder({ client, component: 'raven-test' });
    let attempts = 0;
    let converged = false;
    const reconcile: Reconciler = (key) => {
      if (key !== `${ns}/flaky`) return;
      attempts++;
      if (attempts <= 3) throw new RavenError('NEUTRON_CONFLICT', `port for ${key}: Neutron answered 409`);
      converged = true;
    };
    run({
      name: 'failing',
      for: informer,
      reconcile,
      clock,
      recorder,
      rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000),
    });
    // Retries are due 5, 10, 20 ms after each failure: nothing happens 1 ms early, the retry comes on time.
    await assertRetriesAfter(clock, () => attempts, [5, 10, 20]);
    assert.ok(converged);
    // A fresh failure after success starts again at 5 ms (forget reset the count).
    await recorder.flush();
    const events = await eventsFor(ns, 'flaky');
    assert.equal(events.length, 1, 'repeats of one failure aggregate into one Event');
    assert.equal(events[0]!.reason, 'ReconcileError');
    assert.equal(events[0]!.type, 'Warning');
    assert.equal(events[0]!.count, 3);
    assert.match(events[0]!.message, /Neutron answered 409/);
    await recorder.close();
  });

  it('a RetryableError with maxRetryDelayMs backs off no longer than that, under its own Event reason', async () => {
    const ns = 'capped';
    const informer = await scenario(ns);
    await client.create(resources.configmaps, cm(ns, 'quota'), { namespace: ns });
    const clock = new FakeClock(Date.now());
    const recorder = new EventRecorder({ client, component: 'raven-test' });
    let attempts = 0;
    const reconcile: Reconciler = (key) => {
      if (key !== `${ns}/quota`) return;
      attempts++;
      if (attempts <= 5) throw new RetryableError('QuotaExceeded', 'port quota exceeded', { maxRetryDelayMs: 15 });
    };
    run({
      name: 'capped',
      for: informer,
      reconcile,
      clock,
      recorder,
      rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000),
    });
    // 5, 10, then 20, 40 and 80 capped at 15.
    await assertRetriesAfter(clock, () => attempts, [5, 10, 15, 15, 15]);
    await recorder.flush();
    const events = await eventsFor(ns, 'quota');
    assert.deepEqual(
      events.map((e) => [e.type, e.reason, e.count]),
      [['Warning', 'QuotaExceeded', 5]],
    );
    await recorder.close();
  });

  it('a failure whose cause is an outage (API unreachable) backs off no longer than outageRetryDelayMs', async () => {
    const ns = 'outage';
    const informer = await scenario(ns);
    await client.create(resources.configmaps, cm(ns, 'down'), { namespace: ns });
    // A real client of a port nothing listens on: its calls fail with KUBE_UNREACHABLE. The port was free a moment
    // ago on 127.0.0.1, where the other test files' servers bind (one of them may take it meanwhile and leave the
    // call hanging), so the client goes to another loopback address, where nothing binds.
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const { port } = probe.address() as AddressInfo;
    await new Promise<void>((r) => probe.close(() => r()));
    const dead = new KubeClient({
      connection: { ...testConnection(server), server: `https://127.0.0.254:${port}` },
      retry: { maxAttempts: 1 },
    });
    const clock = new FakeClock(Date.now());
    let attempts = 0;
    const causes: string[] = [];
    const reconcile: Reconciler = async (key) => {
      if (key !== `${ns}/down`) return;
      attempts++;
      if (attempts > 5) return;
      try {
        await dead.get(resources.configmaps, 'down', ns);
      } catch (err) {
        causes.push((err as RavenError).code);
        throw new RavenError('RECONCILE_FAILED', 'could not read the object', { cause: err });
      }
    };
    run({
      name: 'outage',
      for: informer,
      reconcile,
      clock,
      outageRetryDelayMs: 15,
      rateLimiter: new ItemExponentialFailureRateLimiter(5, 1000),
    });
    // 5, 10, then 20, 40 and 80 capped at 15.
    await assertRetriesAfter(clock, () => attempts, [5, 10, 15, 15, 15]);
    assert.deepEqual(new Set(causes), new Set(['KUBE_UNREACHABLE']));
    await dead.close();
  });

  it('a terminal error records an Event with its reason and is not retried until the object changes', async () => {
    const ns = 'terminal';
    const informer = await scenario(ns);
    const bad = await client.create(resources.configmaps, cm(ns, 'bad', { cidr: '10.0.0.0/33' }), { namespace: ns });
    const clock = new FakeClock(Date.now());
    const recorder = new EventRecorder({ client, component: 'raven-test' });
    const attempts: string[] = [];
    const reconcile: Reconciler = (key) => {
      const obj = informer.lister().get(key);
      attempts.push((obj?.data as Record<string, string> | undefined)?.cidr ?? '');
      if (attempts.at(-1) === '10.0.0.0/33')
        throw new TerminalError('cidr "10.0.0.0/33" is not a valid CIDR', { reason: 'InvalidCIDR' });
    };
    run({ name: 'terminal', for: informer, reconcile, clock, recorder });
    await waitFor('first attempt', () => attempts.length === 1);
    clock.advance(10 * 60_000);
    await settle();
    assert.deepEqual(attempts, ['10.0.0.0/33'], 'a terminal error was retried');
    await recorder.flush();
    const [event, ...more] = await eventsFor(ns, 'bad');
    assert.equal(more.length, 0);
    assert.equal(event?.reason, 'InvalidCIDR');
    assert.equal(event.type, 'Warning');
    assert.equal(event.involvedObject.uid, bad.metadata.uid);
    assert.equal(event.involvedObject.kind, 'ConfigMap');
    assert.match(event.message, /not a valid CIDR/);
    await client.update(resources.configmaps, { ...bad, data: { cidr: '10.0.0.0/24' } }, { namespace: ns });
    await waitFor('reconciled after the fix', () => attempts.length === 2);
    assert.equal(attempts[1], '10.0.0.0/24');
    await recorder.close();
  });

  it('requeueAfterMs looks again after exactly that long; a timed-out reconcile is aborted and retried', async () => {
    const ns = 'timing';
    const informer = await scenario(ns);
    await client.create(resources.configmaps, cm(ns, 'pending'), { namespace: ns });
    await client.create(resources.configmaps, cm(ns, 'slow'), { namespace: ns });
    const clock = new FakeClock(Date.now());
    const calls: Record<string, number> = { pending: 0, slow: 0 };
    const abortCodes: string[] = [];
    const reconcile: Reconciler = async (key, signal) => {
      const name = key.split('/')[1]!;
      calls[name]!++;
      if (name === 'pending') return calls[name]! < 3 ? { requeueAfterMs: 2_000 } : undefined;
      if (calls[name] === 1) {
        // Waits on its signal, as a reconcile stuck on a hung OpenStack call would.
        await new Promise((_, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason as Error), { once: true }),
        );
      }
    };
    const { controller } = run({
      name: 'timing',
      for: informer,
      reconcile,
      clock,
      workers: 2,
      reconcileTimeoutMs: 5_000,
      logger: {
        debug() {},
        info() {},
        error() {},
        child() {
          return this;
        },
        warn(obj: object) {
          abortCodes.push(String((obj as { err?: string }).err));
        },
      },
    });
    await waitFor('both reconciled once', () => calls.pending === 1 && calls.slow === 1);
    clock.advance(1_999);
    await settle();
    assert.equal(calls.pending, 1);
    clock.advance(1);
    await waitFor('pending re-checked at 2 s', () => calls.pending === 2);
    clock.advance(2_000);
    await waitFor('pending re-checked again', () => calls.pending === 3);
    // The slow one hit its 5 s timeout at t=4 s + 1 s: aborted with RECONCILE_TIMEOUT, logged, and retried.
    clock.advance(1_000);
    await waitFor('the timeout logged', () => /timed out after 5000 ms/.test(abortCodes.join('\n')));
    clock.advance(5); // the first retry's back-off
    await waitFor('slow retried after its timeout', () => calls.slow === 2);
    clock.advance(60_000);
    await settle();
    assert.equal(calls.pending, 3, 'a converged key was polled again');
    assert.equal(controller.health(), undefined);
  });

  it('survives reconcilers that throw synchronously or throw non-errors, and flags one that ignores its timeout', async () => {
    const ns = 'unsafe';
    const informer = await scenario(ns);
    for (const name of ['sync', 'string', 'stuck'])
      await client.create(resources.configmaps, cm(ns, name), { namespace: ns });
    const clock = new FakeClock(Date.now());
    const calls: Record<string, number> = { sync: 0, string: 0, stuck: 0 };
    let release!: () => void;
    const stuck = new Promise<void>((r) => (release = r));
    const reconcile = ((key: string) => {
      const name = key.split('/')[1]!;
      calls[name]!++;
      if (name === 'sync' && calls[name] === 1) throw new Error('sync throw');
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- the point: a non-Error thrown
      if (name === 'string' && calls[name] === 1) throw 'a string';
      if (name === 'stuck' && calls[name] === 1) return stuck; // ignores its signal
      return undefined;
    }) as Reconciler;
    const { controller } = run({
      name: 'unsafe',
      for: informer,
      reconcile,
      clock,
      workers: 2,
      reconcileTimeoutMs: 1_000,
    });
    await waitFor('all three tried', () => calls.sync === 1 && calls.string === 1 && calls.stuck === 1);
    clock.advance(10);
    await waitFor('thrown ones retried', () => calls.sync === 2 && calls.string === 2);
    clock.advance(2_000);
    assert.match(controller.health() ?? '', /reconcile of unsafe\/stuck has run 2 s, past twice its 1 s timeout/);
    release();
    await waitFor('stuck key released', () => controller.health() === undefined);
    // It returned normally (late, but not an error): converged, not retried.
    clock.advance(60_000);
    await settle();
    assert.deepEqual(calls, { sync: 2, string: 2, stuck: 1 });
  });

  it('map functions: a change of another kind queues the key it maps to (old and new on update)', async () => {
    const ns = 'mapped';
    await scenario(ns);
    const services = new SharedInformer<KubeObject>({ client, resource: resources.services, namespace: ns });
    const slices = new SharedInformer<KubeObject>({ client, resource: resources.endpointslices, namespace: ns });
    runs.push(services.run(stop.signal), slices.run(stop.signal));
    assert.ok(await services.waitForSync(AbortSignal.timeout(10_000)));
    assert.ok(await slices.waitForSync(AbortSignal.timeout(10_000)));
    const reconciled: string[] = [];
    const svcLabel = 'kubernetes.io/service-name';
    const builder = new ControllerBuilder()
      .named('svc')
      .for(services)
      .watches(slices, (slice) => {
        const svc = slice.metadata.labels?.[svcLabel];
        return svc ? [`${slice.metadata.namespace}/${svc}`] : [];
      });
    const controller = builder.complete((key) => void reconciled.push(key));
    runs.push(controller.start(stop.signal));
    // Complete means complete: no source is added to a controller that may already run.
    assert.throws(() => builder.watches(slices, () => []), /complete/);
    const svc = (name: string) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: ns },
      spec: { ports: [{ port: 80 }] },
    });
    await client.create(resources.services, svc('web'), { namespace: ns });
    await client.create(resources.services, svc('api'), { namespace: ns });
    await waitFor('services reconciled', () => reconciled.includes(`${ns}/web`) && reconciled.includes(`${ns}/api`));
    reconciled.length = 0;
    const slice = await client.create(
      resources.endpointslices,
      {
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'web-abc', namespace: ns, labels: { [svcLabel]: 'web' } },
        addressType: 'IPv4',
        endpoints: [],
      },
      { namespace: ns },
    );
    await waitFor('the slice queued its service', () => reconciled.includes(`${ns}/web`));
    reconciled.length = 0;
    // Relabelled to another service: both the old and the new owner are reconciled.
    await client.update(
      resources.endpointslices,
      { ...slice, metadata: { ...slice.metadata, labels: { [svcLabel]: 'api' } } },
      { namespace: ns },
    );
    await waitFor(
      'old and new services queued',
      () => reconciled.includes(`${ns}/web`) && reconciled.includes(`${ns}/api`),
    );
  });

  it('owned objects queue their controlling owner; channel events queue the keys their map names', async () => {
    const ns = 'owned';
    const parents = await scenario(ns);
    const children = new SharedInformer<KubeObject>({ client, resource: resources.secrets, namespace: ns });
    runs.push(children.run(stop.signal));
    assert.ok(await children.waitForSync(AbortSignal.timeout(10_000)));
    const freed = new EventChannel<{ parent: string }>('freed');
    const reconciled: string[] = [];
    const controller = new ControllerBuilder()
      .named('owner')
      .for(parents)
      .owns(children, 'ConfigMap')
      .watchesChannel(freed, (e) => [`${ns}/${e.parent}`])
      .complete((key) => void reconciled.push(key));
    runs.push(controller.start(stop.signal));
    const parent = await client.create(resources.configmaps, cm(ns, 'parent'), { namespace: ns });
    await waitFor('the parent reconciled', () => reconciled.includes(`${ns}/parent`));
    reconciled.length = 0;
    const owner = (controller: boolean) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      name: 'parent',
      uid: parent.metadata.uid!,
      controller,
    });
    const secret = (name: string, controls: boolean): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: ns, ownerReferences: [owner(controls)] },
    });
    // Only an owner with `controller: true` is told (controller-runtime's OnlyControllerOwner).
    await client.create(resources.secrets, secret('referenced', false), { namespace: ns });
    await client.create(resources.secrets, secret('controlled', true), { namespace: ns });
    await waitFor('the controlled secret queued its owner', () => reconciled.includes(`${ns}/parent`));
    assert.deepEqual(reconciled, [`${ns}/parent`], 'the secret that only references it queued it too');
    reconciled.length = 0;
    freed.send({ parent: 'parent' });
    await waitFor('the channel event queued its key', () => reconciled.includes(`${ns}/parent`));
  });

  it('forKeys: keys that name no object come from channels and the resync; failures retry without an Event', async () => {
    const clock = new FakeClock();
    const changed = new EventChannel<{ group: string }>('group-changed');
    const reconciled: string[] = [];
    let failOnce = true;
    const recorder = new EventRecorder({ client, component: 'test', clock });
    const controller = new ControllerBuilder()
      .forKeys({ name: 'groups', list: () => ['g1', 'g2'] })
      .watchesChannel(changed, (e) => [e.group])
      .withOptions({ resyncEveryMs: 60_000, clock, recorder })
      .complete((key) => {
        reconciled.push(key);
        if (key === 'g3' && failOnce) {
          failOnce = false;
          throw new RetryableError('QuotaExceeded', 'no room');
        }
      });
    assert.equal(controller.name, 'groups', 'named after its key space');
    runs.push(controller.start(stop.signal));
    changed.send({ group: 'g3' });
    await waitFor('the failed key retried', () => reconciled.filter((k) => k === 'g3').length === 1);
    clock.advance(5);
    await waitFor('the failed key retried', () => reconciled.filter((k) => k === 'g3').length === 2);
    assert.deepEqual(controller.waiting(), new Map());
    clock.advance(60_000);
    await waitFor('the resync queued every key', () => reconciled.includes('g1') && reconciled.includes('g2'));
    assert.throws(
      () => new ControllerBuilder().complete(() => undefined),
      (err: unknown) => err instanceof RavenError && err.code === 'CONTROLLER_CONFIG_INVALID',
    );
  });

  it('newControllerManagedBy adds the controller to the manager: run only while leading, unless told otherwise', () => {
    const informers = new SharedInformerFactory({ client });
    const configmaps = informers.informerFor(resources.configmaps);
    const manager = new Manager({ informers });
    const leaderOnly = newControllerManagedBy(manager)
      .for(configmaps)
      .complete(() => undefined);
    const everywhere = newControllerManagedBy(manager)
      .named('everywhere')
      .for(configmaps)
      .withOptions({ needLeaderElection: false })
      .complete(() => undefined);
    assert.equal(leaderOnly.name, 'configmaps', 'named after its primary resource by default');
    assert.deepEqual(manager.runnables(), [
      { name: 'configmaps', leaderOnly: true },
      { name: 'everywhere', leaderOnly: false },
    ]);
    assert.equal(everywhere.name, 'everywhere');
  });
});
