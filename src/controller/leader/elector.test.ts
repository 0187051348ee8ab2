import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, it } from '../../../test/support/node-test.ts';
import { FakeClock } from '../../core/index.ts';
import { KubeClient, resources } from '../../kube/client/index.ts';
import { startTestServer, type TestServer, testConnection } from '../../../test/support/server.ts';
import { LeaderElector, type LeaderElectorOptions } from './elector.ts';
import type { Lease } from './lease.ts';

const fast = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<number> {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
  return Date.now() - start;
}

describe('LeaderElector against the API server', { timeout: 60_000 }, () => {
  let server: TestServer;
  let client: KubeClient;
  const controllers: AbortController[] = [];
  const children: ChildProcess[] = [];

  before(async () => {
    server = await startTestServer();
    client = new KubeClient({
      connection: testConnection(server),
    });
  });
  after(async () => {
    for (const c of controllers) c.abort();
    for (const child of children) child.kill('SIGKILL');
    await sleep(50);
    await client.close();
    await server.stop();
  });

  function start(name: string, identity: string, extra: Partial<LeaderElectorOptions> = {}) {
    const elector = new LeaderElector({ client, namespace: 'default', name, identity, ...fast, ...extra });
    const stop = new AbortController();
    controllers.push(stop);
    const state = {
      started: 0,
      stopped: 0,
      leaderSignal: undefined as AbortSignal | undefined,
      leaders: [] as string[],
    };
    const done = elector.run(stop.signal, {
      onStartedLeading: (s) => {
        state.started++;
        state.leaderSignal = s;
      },
      onStoppedLeading: () => void state.stopped++,
      onNewLeader: (id) => void state.leaders.push(id),
    });
    return { elector, stop, state, done };
  }
  const readLease = (name: string) => client.get<Lease>(resources.leases, name, 'default');

  it('two electors: exactly one leads at any time, and the Lease names it', async () => {
    const a = start('two', 'a');
    const b = start('two', 'b');
    let leaderSeen = false;
    for (let t = 0; t < 3000; t += 50) {
      assert.ok(!(a.elector.isLeader() && b.elector.isLeader()), 'both lead');
      leaderSeen ||= a.elector.isLeader() || b.elector.isLeader();
      await sleep(50);
    }
    assert.ok(leaderSeen, 'nobody led');
    const [leader, other] = a.elector.isLeader() ? [a, b] : [b, a];
    const lease = await readLease('two');
    assert.equal(lease.spec?.holderIdentity, leader === a ? 'a' : 'b');
    assert.equal(lease.spec?.leaseDurationSeconds, 2);
    assert.equal(lease.spec?.leaseTransitions, 0);
    assert.equal(other.elector.getLeader(), lease.spec?.holderIdentity);
    assert.deepEqual(other.state.leaders, [lease.spec?.holderIdentity]);
    assert.equal(leader.state.started, 1);
    assert.equal(other.state.started, 0);
    assert.equal(leader.elector.epoch(), 0, 'the first term');

    // Graceful stop: the leader's work stops, the Lease is released, and the other takes over well within a lease.
    const stoppedAt = Date.now();
    leader.stop.abort();
    await leader.done;
    assert.equal(leader.state.leaderSignal?.aborted, true);
    assert.equal(leader.state.stopped, 1);
    assert.equal(leader.elector.isLeader(), false);
    await until('the other to lead', () => other.elector.isLeader(), 3000);
    const took = Date.now() - stoppedAt;
    assert.ok(took < 1000, `took over after ${took} ms`);
    const after2 = await readLease('two');
    assert.equal(after2.spec?.holderIdentity, other === a ? 'a' : 'b');
    assert.equal(after2.spec?.leaseTransitions, 1);
    assert.equal(other.elector.epoch(), 1, 'the second term: the epoch its VIFs are signed with');
    other.stop.abort();
    await other.done;
    assert.equal((await readLease('two')).spec?.holderIdentity, '');
  });

  it('a killed leader (no release) is replaced within about a lease duration + retry', async () => {
    const env = {
      ...process.env,
      RAVEN_ELECTOR: JSON.stringify({
        server: server.url,
        ca: server.caPem,
        token: server.token,
        namespace: 'default',
        name: 'killed',
        identity: 'child',
        ...fast,
      }),
    };
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', new URL('../../../test/support/elector-child.ts', import.meta.url).pathname],
      { env, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    children.push(child);
    let out = '';
    child.stdout.on('data', (d: Buffer) => void (out += d.toString()));
    await until('the child to lead', () => out.includes('LEADING child'), 15_000);
    const survivor = start('killed', 'parent');
    await until('the survivor to see the child lead', () => survivor.elector.getLeader() === 'child', 3000);
    child.kill('SIGKILL');
    const killedAt = Date.now();
    await until('the survivor to lead', () => survivor.elector.isLeader(), 6000);
    const took = Date.now() - killedAt;
    // The lease declares ceil(1.5 s) = 2 s; + one jittered retry (≤ 440 ms) + request time.
    assert.ok(took >= 1000 && took < 4000, `took over after ${took} ms`);
    const lease = await readLease('killed');
    assert.equal(lease.spec?.holderIdentity, 'parent');
    assert.equal(lease.spec?.leaseTransitions, 1);
    survivor.stop.abort();
    await survivor.done;
  });

  it('a leader that cannot renew stops leading at once (leaderSignal aborts, onStoppedLeading runs)', async () => {
    const leader = start('faulty', 'solo');
    await until('leading', () => leader.elector.isLeader());
    const path = '/apis/coordination.k8s.io/v1/namespaces/default/leases/faulty';
    for (const method of ['PUT', 'PATCH']) {
      const res = await server.request('/_raven/faults/rules', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ path, method, count: 1000, status: 500 }),
      });
      assert.ok(res.ok, await res.text());
    }
    const faultAt = Date.now();
    await leader.done;
    const took = Date.now() - faultAt;
    assert.equal(leader.state.leaderSignal?.aborted, true);
    assert.equal(leader.state.stopped, 1);
    assert.equal(leader.elector.isLeader(), false);
    // At most one retry period before the round starts, then the renew deadline.
    assert.ok(took <= fast.retryPeriodMs + fast.renewDeadlineMs + 500, `stopped after ${took} ms`);
    assert.ok((await server.request('/_raven/faults/rules', { method: 'DELETE' })).ok);
    // No release after a lost lease: the record still names it until it expires.
    assert.equal((await readLease('faulty')).spec?.holderIdentity, 'solo');
  });

  /**
   * A client whose next `method` write, once `arm`ed, lands on the server but whose response is held back for
   * `holdMs` (a slow network, a starved process) unless the caller's signal aborts first, as fetch would: the
   * client then sees an abort although the Lease was written. `landed` resolves while that response is held. The
   * fault API cannot model this: its delay comes before the write is applied.
   */
  function lateResponse(method: 'create' | 'update', holdMs: number) {
    let armed = false;
    let landed = (): void => undefined;
    const written = new Promise<void>((resolve) => (landed = resolve));
    const wrapped = new Proxy(client, {
      get(target, prop) {
        if (prop === method) {
          return async (...[ref, obj, options]: Parameters<KubeClient['update']>) => {
            const out = await target[method](ref, obj, { ...options, signal: undefined });
            if (armed) {
              armed = false;
              landed();
              await new Promise<void>((resolve, reject) => {
                const timer = setTimeout(resolve, holdMs);
                options?.signal?.addEventListener('abort', () => {
                  clearTimeout(timer);
                  reject(options.signal!.reason as Error);
                });
              });
            }
            return out;
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    return {
      client: wrapped,
      arm: () => {
        armed = true;
        return written;
      },
    };
  }

  // The deadline (10 s) is far past the held response (300 ms), so the attempt completes unless the stop cuts it.
  const slowWrites = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 200 };
  const inFlight = [
    { what: 'the acquiring create', name: 'late-create', method: 'create', released: undefined, whileLeading: false },
    { what: 'the acquiring update', name: 'late-update', method: 'update', released: 'ghost', whileLeading: false },
    { what: "a renewal's update", name: 'late-renew', method: 'update', released: undefined, whileLeading: true },
  ] as const;
  for (const c of inFlight) {
    it(`a stop while ${c.what} is in flight (written, response not back yet) still leaves the Lease released`, async () => {
      // A record released by another replica: whoever writes it next takes it over (one transition).
      if (c.released)
        await client.create<Lease>(resources.leases, {
          metadata: { name: c.name, namespace: 'default' },
          spec: { holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 0 },
        });
      const late = lateResponse(c.method, 300);
      let written: Promise<void> | undefined;
      if (!c.whileLeading) written = late.arm();
      const e = start(c.name, 'stopping', { client: late.client, ...slowWrites });
      if (c.whileLeading) {
        await until('leading', () => e.elector.isLeader());
        written = late.arm();
      }
      // No polling: the stop comes in the same turn that sees the write land, while its response is still held.
      await written;
      e.stop.abort();
      await e.done;
      const lease = await readLease(c.name);
      assert.equal(lease.spec?.holderIdentity, '', 'a stopped replica still holds the Lease');
      assert.equal(lease.spec?.leaseDurationSeconds, 1, 'not released: the record is not the release record');
      assert.equal(lease.spec?.leaseTransitions, c.released ? 1 : 0);
      assert.equal(e.elector.isLeader(), false);
      assert.equal(e.state.started, e.state.stopped, 'leading started but never stopped');
    });
  }

  it('stopped while acquiring, it releases a Lease that still names it (a previous process with its identity)', async () => {
    await client.create<Lease>(resources.leases, {
      metadata: { name: 'leftover', namespace: 'default' },
      spec: { holderIdentity: 'restarted', leaseDurationSeconds: 15, leaseTransitions: 2 },
    });
    const path = '/apis/coordination.k8s.io/v1/namespaces/default/leases/leftover';
    const rule = { path, method: 'PUT', count: 1, status: 500 };
    const res = await server.request('/_raven/faults/rules', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(rule),
    });
    assert.ok(res.ok, await res.text());
    // Its first takeover write fails; the next attempt is 2 s away, so the stop finds it acquiring, not leading.
    const e = start('leftover', 'restarted', {
      random: () => 0,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2000,
    });
    await until('the failing write', async () => {
      const { rules } = (await (await server.request('/_raven/faults/rules')).json()) as { rules: unknown[] };
      return rules.length === 0;
    });
    e.stop.abort();
    await e.done;
    const lease = await readLease('leftover');
    assert.equal(lease.spec?.holderIdentity, '');
    assert.equal(lease.spec?.leaseDurationSeconds, 1);
    assert.equal(lease.spec?.leaseTransitions, 2);
  });

  it('takes over only after the lease expires on its own clock, whatever the remote renewTime says', async () => {
    await client.create<Lease>(resources.leases, {
      metadata: { name: 'stale', namespace: 'default' },
      spec: {
        holderIdentity: 'ghost',
        leaseDurationSeconds: 15,
        renewTime: '2000-01-01T00:00:00.000000Z',
        acquireTime: '2000-01-01T00:00:00.000000Z',
        leaseTransitions: 3,
      },
    });
    const clock = new FakeClock(Date.UTC(2030, 0, 1));
    const e = start('stale', 'new', {
      clock,
      random: () => 0,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2000,
    });
    await until('observing the ghost', () => e.state.leaders.includes('ghost'));
    await sleep(200);
    assert.equal(e.elector.isLeader(), false);
    assert.equal((await readLease('stale')).spec?.holderIdentity, 'ghost');
    clock.advance(14_000);
    await sleep(200);
    assert.equal(e.elector.isLeader(), false, 'took over before the lease expired locally');
    clock.advance(2_000);
    await until('taking over', () => e.elector.isLeader());
    const lease = await readLease('stale');
    assert.equal(lease.spec?.holderIdentity, 'new');
    assert.equal(lease.spec?.leaseTransitions, 4);
    e.stop.abort();
    await e.done;
  });

  it('a slow read does not shorten the lease: it counts from when the record arrived, not when it was asked for', async () => {
    await client.create<Lease>(resources.leases, {
      metadata: { name: 'slow-read', namespace: 'default' },
      spec: {
        holderIdentity: 'ghost',
        leaseDurationSeconds: 15,
        renewTime: '2000-01-01T00:00:00.000000Z',
        acquireTime: '2000-01-01T00:00:00.000000Z',
        leaseTransitions: 0,
      },
    });
    const clock = new FakeClock(Date.UTC(2030, 0, 1));
    // The first read of the Lease takes 10 s (a starved process, a slow API server).
    let slowReads = 1;
    const slow = new Proxy(client, {
      get(target, prop) {
        if (prop === 'get') {
          return async (...args: Parameters<KubeClient['get']>) => {
            const out = await target.get(...args);
            if (slowReads-- > 0) clock.advance(10_000);
            return out;
          };
        }
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const e = start('slow-read', 'new', {
      client: slow,
      clock,
      random: () => 0,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2000,
    });
    await until('observing the ghost', () => e.state.leaders.includes('ghost'));
    await sleep(200);
    // 16 s after the read was sent, 6 s after the record arrived: the ghost still holds it.
    clock.advance(6_000);
    await sleep(300);
    assert.equal(e.elector.isLeader(), false, 'took over 6 s after seeing a 15 s lease');
    clock.advance(10_000);
    await until('taking over', () => e.elector.isLeader());
    assert.equal((await readLease('slow-read')).spec?.holderIdentity, 'new');
    e.stop.abort();
    await e.done;
  });
});
