import { RavenError, errorMessage, realClock, silentLogger, type Clock, type Logger } from '../../core/index.ts';
import { type KubeClient, isAlreadyExists, isConflict, isNotFound, resources } from '../../kube/client/index.ts';
import { isHeldByOther, leaseSeconds, microTime, recordKey, type Lease, type LeaseSpec } from './lease.ts';

export interface LeaderElectorOptions {
  client: KubeClient;
  namespace: string;
  /** The Lease's name. */
  name: string;
  /** This replica's identity (unique per replica: pod name, or host + random). */
  identity: string;
  /** How long a non-leader waits, after it last saw the record change, before taking over. Default 15000. */
  leaseDurationMs?: number;
  /** How long the leader keeps trying to renew before it gives up leading. Default 10000. */
  renewDeadlineMs?: number;
  /** The wait between attempts (jittered ×[1, 2.2) while acquiring). Default 2000. */
  retryPeriodMs?: number;
  /**
   * Release the Lease when `run`'s signal aborts while leading, so another replica takes over at once. Default true.
   */
  releaseOnCancel?: boolean;
  clock?: Clock;
  logger?: Logger;
  /** Random in [0, 1) for the jitter (tests make it deterministic). */
  random?: () => number;
}

export interface LeaderCallbacks {
  /**
   * Called once this replica leads; `leaderSignal` aborts the moment it stops leading. A returned promise is awaited
   * (bounded) before release.
   */
  onStartedLeading(leaderSignal: AbortSignal): void | Promise<void>;
  /** Called once when leading ends (renewal failed, or `run`'s signal aborted), after `leaderSignal` aborted. */
  onStoppedLeading(): void;
  /** Called whenever the observed holder changes (including to this replica). */
  onNewLeader?(identity: string): void;
}

/** client-go's `wait.JitterUntil` factor for the acquire loop. */
export const JITTER_FACTOR = 1.2;

/**
 * Leader election on a coordination.k8s.io/v1 Lease with client-go `leaderelection` semantics. See the folder's
 * `index.ts` for the contract.
 *
 * @example
 * const elector = new LeaderElector({ client, namespace: 'kube-system', name: 'raven', identity: hostname });
 * await elector.run(signal, {
 *   onStartedLeading: (leaderSignal) => manager.start(leaderSignal),
 *   onStoppedLeading: () => process.exit(1),
 * });
 */
export class LeaderElector {
  readonly #client: KubeClient;
  readonly #namespace: string;
  readonly #name: string;
  readonly #identity: string;
  readonly #leaseMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryMs: number;
  readonly #releaseOnCancel: boolean;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #random: () => number;
  /** The last Lease read or written, and the local time its record last changed (client-go's observedTime). */
  #observed: Lease | undefined;
  #observedKey = '';
  #observedTime = 0;
  #leading = false;
  #running = false;
  #callbacks: LeaderCallbacks | undefined;

  constructor(options: LeaderElectorOptions) {
    this.#client = options.client;
    this.#namespace = options.namespace;
    this.#name = options.name;
    this.#identity = options.identity;
    this.#leaseMs = options.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.#retryMs = options.retryPeriodMs ?? 2_000;
    this.#releaseOnCancel = options.releaseOnCancel ?? true;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    // client-go's NewLeaderElector checks: a lease outlives the renew deadline, which outlives a jittered retry.
    if (!this.#identity) throw new RavenError('LEADER_CONFIG_INVALID', 'identity must not be empty');
    if (!(this.#leaseMs > this.#renewDeadlineMs))
      throw new RavenError('LEADER_CONFIG_INVALID', 'leaseDurationMs must be greater than renewDeadlineMs');
    if (!(this.#renewDeadlineMs > JITTER_FACTOR * this.#retryMs))
      throw new RavenError('LEADER_CONFIG_INVALID', 'renewDeadlineMs must be greater than 1.2 × retryPeriodMs');
    if (!(this.#retryMs > 0)) throw new RavenError('LEADER_CONFIG_INVALID', 'retryPeriodMs must be positive');
    this.#log = (options.logger ?? silentLogger).child({
      lease: `${this.#namespace}/${this.#name}`,
      identity: this.#identity,
    });
  }

  /** True while this replica leads (between onStartedLeading and the abort of its leaderSignal). */
  isLeader(): boolean {
    return this.#leading;
  }

  /**
   * The last observed record's `leaseTransitions`: while this replica leads, the number of its term. A leader paused
   * past its Lease still answers its old term until it reads the record again, which is what makes its signatures
   * recognisable as stale (docs/pools.md, "Signed VIFs").
   */
  epoch(): number {
    return this.#observed?.spec?.leaseTransitions ?? 0;
  }

  /** The holder in the last observed record ('' when released or unknown). */
  getLeader(): string {
    return this.#observed?.spec?.holderIdentity ?? '';
  }

  /**
   * Acquires, then leads until renewal fails or `signal` aborts; resolves when leading has ended (or `signal` aborted
   * before acquiring). Like client-go's `Run`, it does not try to acquire again: a replica that lost the lease should
   * restart (its caches and queues may hold leader-era state).
   */
  async run(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<void> {
    if (this.#running) throw new RavenError('LEADER_ALREADY_RUNNING', 'run() is already running');
    this.#running = true;
    this.#callbacks = callbacks;
    try {
      if (await this.#acquire(signal)) await this.#lead(signal, callbacks);
      // Stopped while acquiring (a write that landed was seen: attempts are not cut by the stop). If the last record
      // read still names us (a previous process with our identity), give it back rather than let it run out.
      else if (this.#releaseOnCancel) await this.#release();
    } finally {
      this.#running = false;
    }
  }

  async #acquire(signal: AbortSignal): Promise<boolean> {
    this.#log.info({}, 'trying to acquire the lease');
    while (!signal.aborted) {
      if (await this.#withinRenewDeadline((deadline) => this.#attempt(deadline))) {
        this.#log.info({}, 'acquired the lease');
        return true;
      }
      const wait = this.#retryMs * (1 + this.#random() * JITTER_FACTOR);
      if (!(await this.#sleep(wait, signal))) break;
    }
    return false;
  }

  async #lead(signal: AbortSignal, callbacks: LeaderCallbacks): Promise<void> {
    const leader = new AbortController();
    this.#leading = true;
    let work: Promise<unknown> = Promise.resolve();
    try {
      work = Promise.resolve(callbacks.onStartedLeading(leader.signal)).catch((err: unknown) => {
        this.#log.error({ error: errorMessage(err) }, 'onStartedLeading failed');
      });
    } catch (err) {
      this.#log.error({ error: errorMessage(err) }, 'onStartedLeading failed');
    }
    while (!signal.aborted) {
      if (!(await this.#sleep(this.#retryMs, signal))) break;
      if (!(await this.#renewWithinDeadline(signal))) {
        this.#log.warn(
          { renewDeadlineMs: this.#renewDeadlineMs },
          'failed to renew the lease within the renew deadline: stopping leading',
        );
        break;
      }
    }
    // Stop leader-only work first, at once; then (on a graceful stop) release, then tell the caller.
    this.#leading = false;
    leader.abort(new RavenError('LEADERSHIP_LOST', signal.aborted ? 'leader election stopped' : 'lost the lease'));
    if (signal.aborted && this.#releaseOnCancel) {
      await this.#settle(work, this.#renewDeadlineMs);
      await this.#release();
    }
    try {
      callbacks.onStoppedLeading();
    } catch (err) {
      this.#log.error({ error: errorMessage(err) }, 'onStoppedLeading failed');
    }
  }

  /**
   * One renewal round: attempts every retryPeriod until one succeeds or renewDeadline passes. The deadline aborts
   * an attempt in flight, so a hung API call cannot keep a stale leader working past it; a stop ends the round only
   * between attempts (see {@link #attempt}).
   */
  #renewWithinDeadline(signal: AbortSignal): Promise<boolean> {
    return this.#withinRenewDeadline(async (deadline) => {
      const either = AbortSignal.any([signal, deadline]);
      while (!either.aborted) {
        if (await this.#attempt(deadline)) return true;
        if (!(await this.#sleep(this.#retryMs, either))) break;
      }
      // A graceful stop during a renewal is not a lost lease: we still hold it and may release it.
      return signal.aborted;
    });
  }

  /**
   * One tryAcquireOrRenew, cut by `deadline` but deliberately not by a stop: the server may apply a write whose
   * client gave up waiting, and only its response says that we hold the Lease (so a stop must release it) and gives
   * the resourceVersion the release is written against. A stop therefore waits for the attempt, at most renewDeadline.
   */
  #attempt(deadline: AbortSignal): Promise<boolean> {
    return Promise.race([this.#tryAcquireOrRenew(deadline), abortedPromise(deadline)]);
  }

  /** Runs `fn` with a signal that aborts once renewDeadline has passed on the injected clock. */
  async #withinRenewDeadline<T>(
    fn: (deadline: AbortSignal) => Promise<T>,
    reason = new RavenError('RENEW_DEADLINE', 'renew deadline passed'),
  ): Promise<T> {
    const deadline = new AbortController();
    const timer = this.#clock.setTimeout(() => deadline.abort(reason), this.#renewDeadlineMs);
    try {
      return await fn(deadline.signal);
    } finally {
      this.#clock.clearTimeout(timer);
    }
  }

  /**
   * client-go's `tryAcquireOrRenew`: read, create if missing, respect a live holder, write with the read
   * resourceVersion.
   */
  async #tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const now = this.#clock.now();
    let current: Lease;
    try {
      current = await this.#client.get<Lease>(resources.leases, this.#name, this.#namespace, { signal });
    } catch (err) {
      if (!isNotFound(err)) {
        this.#log.warn({ error: errorMessage(err) }, 'failed to read the lease');
        return false;
      }
      return this.#create(now, signal);
    }
    this.#observe(current);
    const old = current.spec ?? {};
    if (isHeldByOther(old, this.#identity, this.#observedTime, now)) return false;
    const wasMine = (old.holderIdentity ?? '') === this.#identity;
    const spec: LeaseSpec = {
      ...old,
      holderIdentity: this.#identity,
      leaseDurationSeconds: leaseSeconds(this.#leaseMs),
      acquireTime: wasMine && old.acquireTime ? old.acquireTime : microTime(now),
      renewTime: microTime(now),
      leaseTransitions: wasMine ? (old.leaseTransitions ?? 0) : (old.leaseTransitions ?? 0) + 1,
    };
    // The compare-and-swap: `current` carries the resourceVersion we read; a 409 means someone wrote in between.
    try {
      const written = await this.#client.update<Lease>(resources.leases, { ...current, spec }, { signal });
      this.#observe(written);
      return true;
    } catch (err) {
      if (isConflict(err)) this.#log.debug({}, 'lease changed while we wrote it (conflict)');
      else this.#log.warn({ error: errorMessage(err) }, 'failed to write the lease');
      return false;
    }
  }

  async #create(now: number, signal: AbortSignal): Promise<boolean> {
    const lease: Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.#name, namespace: this.#namespace },
      spec: {
        holderIdentity: this.#identity,
        leaseDurationSeconds: leaseSeconds(this.#leaseMs),
        acquireTime: microTime(now),
        renewTime: microTime(now),
        leaseTransitions: 0,
      },
    };
    try {
      this.#observe(await this.#client.create<Lease>(resources.leases, lease, { signal }));
      return true;
    } catch (err) {
      if (!isAlreadyExists(err)) this.#log.warn({ error: errorMessage(err) }, 'failed to create the lease');
      return false;
    }
  }

  /**
   * Remembers the lease; the observed time moves only when the record changed (not on every read), and is the time
   * the record ARRIVED (client-go's `setObservedRecord`): the time the request was sent would shorten the lease by
   * the request's latency, so a slow read could take over from a leader that is still working.
   */
  #observe(lease: Lease): void {
    const key = recordKey(lease.spec);
    const before = this.getLeader();
    this.#observed = lease;
    if (key !== this.#observedKey) {
      this.#observedKey = key;
      this.#observedTime = this.#clock.now();
    }
    const after = this.getLeader();
    if (after && after !== before) {
      this.#log.info({ leader: after }, 'new leader observed');
      try {
        this.#callbacks?.onNewLeader?.(after);
      } catch (err) {
        this.#log.error({ error: errorMessage(err) }, 'onNewLeader failed');
      }
    }
  }

  /** client-go's `release`: empty holder, 1 s duration, so waiting replicas take over at their next attempt. */
  async #release(): Promise<void> {
    const current = this.#observed;
    if (!current || (current.spec?.holderIdentity ?? '') !== this.#identity) return;
    const now = this.#clock.now();
    const spec: LeaseSpec = {
      ...current.spec,
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: microTime(now),
      renewTime: microTime(now),
    };
    try {
      const released = await this.#withinRenewDeadline(
        (signal) => this.#client.update<Lease>(resources.leases, { ...current, spec }, { signal }),
        new RavenError('RELEASE_TIMEOUT', 'release timed out'),
      );
      this.#observe(released);
      this.#log.info({}, 'released the lease');
    } catch (err) {
      this.#log.warn({ error: errorMessage(err) }, 'failed to release the lease');
    }
  }

  /** Sleeps on the injected clock; false when `signal` aborted first. */
  async #sleep(ms: number, signal: AbortSignal): Promise<boolean> {
    try {
      await this.#clock.sleep(ms, signal);
      return true;
    } catch {
      return false;
    }
  }

  async #settle(work: Promise<unknown>, ms: number): Promise<void> {
    const timeout = new AbortController();
    try {
      await Promise.race([work, this.#sleep(ms, timeout.signal)]);
    } finally {
      timeout.abort();
    }
  }
}

/** Resolves false when `signal` aborts (so a hung request loses the race at the deadline). */
function abortedPromise(signal: AbortSignal): Promise<false> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(false);
    else signal.addEventListener('abort', () => resolve(false), { once: true });
  });
}
