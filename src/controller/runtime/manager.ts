import { setMaxListeners } from 'node:events';
import { RavenError, errorMessage, realClock, silentLogger, type Clock, type Logger } from '../../core/index.ts';
import type { SharedInformerFactory } from '../../kube/cache/index.ts';
import type { EventRecorder } from '../events/index.ts';
import { LeaderElector, type LeaderElectorOptions } from '../leader/index.ts';
import { HealthChecks, type HealthCheck } from './health.ts';

/** Something the manager starts and stops: a {@link Controller}, or any long-running job. */
export interface Runnable {
  readonly name: string;
  /**
   * Runs until `signal` aborts, then stops gracefully and resolves. `hardStop` aborts when there is no time left
   * (leadership lost, or the shutdown deadline passed): abandon in-flight work at once.
   */
  start(signal: AbortSignal, options: { hardStop: AbortSignal }): Promise<void>;
  /** Feeds the manager's `healthz`: a string says what is wrong. */
  health?(): string | undefined;
  /** Work queued or in flight (a controller's keys, and those due back within `horizonMs`); 0 or absent: idle. */
  pending?(horizonMs?: number): number;
}

export interface ManagerOptions {
  /** The shared informers: run from start (leader or not) so a standby's caches are warm when it takes over. */
  informers: SharedInformerFactory;
  /** Active/passive on a Lease. Without it, this process leads alone. */
  leaderElection?: Omit<LeaderElectorOptions, 'clock' | 'logger'>;
  /** Written to and flushed on stop. */
  recorder?: EventRecorder;
  /** How long a stop may take (draining reconciles, releasing the Lease) before work is abandoned. Default 30000. */
  shutdownTimeoutMs?: number;
  /** Give up starting when the caches have not synced in this long. Default 120000. */
  cacheSyncTimeoutMs?: number;
  /** `readyz` fails while an informer has had no successful list or watch for this long. Default 30000. */
  informersUnreadyAfterMs?: number;
  clock?: Clock;
  logger?: Logger;
}

interface Entry {
  runnable: Runnable;
  leaderOnly: boolean;
}

/** Something to close once everything has stopped (a client's connection pool). */
export type Closer = () => Promise<void> | void;

/**
 * controller-runtime's manager: owns the informers, the runnables (controllers), leader election and the health
 * checks, and orders start and stop. See the folder's `index.ts` for the contract.
 *
 * @example
 * const leaderElection = { client, namespace: 'kube-system', name: 'raven', identity };
 * const manager = new Manager({ informers, leaderElection, recorder, logger });
 * manager.add(new Controller({ name: 'pod', for: pods, reconcile }));
 * await manager.start(shutdownSignal); // rejects with LEADER_LOST / CACHE_SYNC_TIMEOUT; resolves after a clean stop
 */
export class Manager {
  readonly health = new HealthChecks();
  readonly #informers: SharedInformerFactory;
  readonly #elector: LeaderElector | undefined;
  readonly #recorder: EventRecorder | undefined;
  readonly #shutdownMs: number;
  readonly #syncMs: number;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #entries: Entry[] = [];
  readonly #servers: Runnable[] = [];
  readonly #closers: Closer[] = [];
  #synced = false;
  #stopping = false;
  #started = false;

  constructor(options: ManagerOptions) {
    this.#informers = options.informers;
    this.#recorder = options.recorder;
    this.#shutdownMs = options.shutdownTimeoutMs ?? 30_000;
    this.#syncMs = options.cacheSyncTimeoutMs ?? 120_000;
    this.#clock = options.clock ?? realClock;
    this.#log = (options.logger ?? silentLogger).child({ component: 'manager' });
    if (options.leaderElection)
      this.#elector = new LeaderElector({
        ...options.leaderElection,
        clock: this.#clock,
        logger: options.logger ?? silentLogger,
      });
    this.health.add('healthz', 'ping', () => undefined);
    this.health.add('healthz', 'runnables', () =>
      this.#entries.map((e) => e.runnable.health?.()).find((r) => r !== undefined),
    );
    this.health.add('readyz', 'informer-sync', () => (this.#synced ? undefined : 'caches have not synced yet'));
    this.health.add('readyz', 'informers', informersCheck(this.#informers, options.informersUnreadyAfterMs ?? 30_000));
    this.health.add('readyz', 'shutdown', () => (this.#stopping ? 'shutting down' : undefined));
    // A standby is ready too (it must be, or a Deployment's rollout would wait for it forever); this only says which.
    this.health.add('readyz', 'leader-election', () => ({ note: this.#leaderNote() }));
  }

  /** Adds a runnable; `leaderOnly` (default true) ones run only while this replica leads. */
  add(runnable: Runnable, options: { leaderOnly?: boolean } = {}): this {
    if (this.#started) throw new RavenError('MANAGER_ALREADY_STARTED', `cannot add ${runnable.name} after start()`);
    this.#entries.push({ runnable, leaderOnly: options.leaderOnly ?? true });
    return this;
  }

  /**
   * Adds a server that already listens (the embedded API server, a simulator, the ops endpoints): it runs from the
   * start, before the informers (which may be its clients), and is stopped last, after the informers have stopped
   * and the Events are flushed, so nothing that talks to it sees it go.
   */
  addServer(server: Runnable): this {
    if (this.#started) throw new RavenError('MANAGER_ALREADY_STARTED', `cannot add ${server.name} after start()`);
    this.#servers.push(server);
    return this;
  }

  /** Runs `closer` at the very end of a stop, after the servers (in the reverse order closers were added). */
  closeOnStop(closer: Closer): this {
    this.#closers.push(closer);
    return this;
  }

  /** What runs under this manager besides its servers: names, and whether only the leader runs them. */
  runnables(): { name: string; leaderOnly: boolean }[] {
    return this.#entries.map((e) => ({ name: e.runnable.name, leaderOnly: e.leaderOnly }));
  }

  /**
   * The runnables with work queued or in flight (or due back within `horizonMs`), and how much: empty when every
   * controller is idle.
   */
  busy(horizonMs = 0): Map<string, number> {
    const busy = new Map<string, number>();
    for (const { runnable } of this.#entries) {
      const n = runnable.pending?.(horizonMs) ?? 0;
      if (n > 0) busy.set(runnable.name, n);
    }
    return busy;
  }

  addHealthzCheck(name: string, check: HealthCheck): void {
    this.health.add('healthz', name, check);
  }

  addReadyzCheck(name: string, check: HealthCheck): void {
    this.health.add('readyz', name, check);
  }

  /** True while leader-only runnables run (always, once started, without leader election). */
  isLeader(): boolean {
    return this.#elector ? this.#elector.isLeader() : this.#started && !this.#stopping;
  }

  /** The leader's term (the Lease's `leaseTransitions` as last observed); 0 without leader election. */
  leaderEpoch(): number {
    return this.#elector?.epoch() ?? 0;
  }

  /** The holder of the Lease as last observed ('' when unknown, released, or without leader election). */
  leader(): string {
    return this.#elector?.getLeader() ?? '';
  }

  #leaderNote(): string {
    if (!this.#elector) return 'leader election off';
    if (this.isLeader()) return 'leading';
    const holder = this.leader();
    return holder ? `standby, leader ${holder}` : 'standby';
  }

  /**
   * Starts the informers and waits for their caches; starts the runnables (leader-only ones once leading); and when
   * `signal` aborts: stops the runnables (their sources first, then they drain), releases the Lease, stops the
   * informers and flushes Events, all within `shutdownTimeoutMs`. Rejects with `LEADER_LOST` when leadership is
   * lost (the process should exit and restart: its state is from the old term), `CACHE_SYNC_TIMEOUT`, or the first
   * runnable that fails.
   */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new RavenError('MANAGER_ALREADY_STARTED', 'start() called twice');
    this.#started = true;
    // Runnables stop gracefully on `graceful`; `hard` abandons their work (deadline passed or leadership lost).
    const graceful = new AbortController();
    const hard = new AbortController();
    // Every runnable, and every controller inside one, listens on these: one listener each is the design, not a
    // leak, so Node's warning past ten listeners does not apply.
    setMaxListeners(0, graceful.signal, hard.signal);
    let failure: unknown;
    const fail = (err: unknown): void => {
      failure ??= err;
      graceful.abort();
    };
    signal.addEventListener('abort', () => graceful.abort(), { once: true });
    if (signal.aborted) graceful.abort();
    const serversStop = new AbortController();
    const serversHard = new AbortController();
    const serverRuns = this.#servers.map((server) =>
      this.#runServer(server, serversStop.signal, serversHard.signal, fail),
    );
    const informersStop = new AbortController();
    // Each informer's list or watch, and its back-off, listens on it: as many listeners as informers, not a leak.
    setMaxListeners(0, informersStop.signal);
    const informerRuns = this.#informers.start(informersStop.signal);

    const runs: Promise<void>[] = [];
    const launch = (entries: Entry[], stop: AbortSignal, hardStop: AbortSignal): void => {
      for (const { runnable } of entries) {
        // Through a promise, so a runnable that throws synchronously fails the manager like one that rejects.
        runs.push(
          Promise.resolve()
            .then(() => runnable.start(stop, { hardStop }))
            .catch((err: unknown) => {
              this.#log.error(
                { runnable: runnable.name, err: errorMessage(err) },
                'runnable failed: stopping the manager',
              );
              fail(err);
            }),
        );
      }
    };

    const synced = await this.#waitForSync(graceful.signal);
    if (!synced && !graceful.signal.aborted)
      fail(new RavenError('CACHE_SYNC_TIMEOUT', `caches did not sync within ${this.#syncMs} ms`));
    let election: Promise<void> = Promise.resolve();
    const electionStop = new AbortController();
    if (!graceful.signal.aborted) {
      this.#synced = true;
      this.#log.info({ runnables: this.runnables().map((r) => r.name) }, 'caches synced; starting runnables');
      launch(
        this.#entries.filter((e) => !e.leaderOnly),
        graceful.signal,
        hard.signal,
      );
      const leaderOnly = this.#entries.filter((e) => e.leaderOnly);
      if (!this.#elector) launch(leaderOnly, graceful.signal, hard.signal);
      else election = this.#elect(electionStop.signal, leaderOnly, graceful, hard.signal, launch, fail).catch(fail);
    }

    await new Promise<void>((resolve) => {
      if (graceful.signal.aborted) resolve();
      else graceful.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    this.#stopping = true;
    this.#log.info({ reason: failure === undefined ? 'signal' : errorMessage(failure) }, 'stopping');
    // Past the deadline, abandon in-flight work so the process can exit.
    const deadline = this.#clock.setTimeout(
      () => hard.abort(new RavenError('SHUTDOWN_TIMEOUT', 'shutdown deadline passed')),
      this.#shutdownMs,
    );
    await Promise.all(runs);
    // Leader-only work has drained while we still held the Lease; only now release it.
    electionStop.abort();
    await election;
    informersStop.abort();
    await informerRuns;
    await this.#recorder?.close(hard.signal).catch(() => undefined);
    await this.#stopServers(serverRuns, serversStop, serversHard, hard.signal);
    for (const close of [...this.#closers].reverse()) {
      await Promise.resolve()
        .then(close)
        .catch((err: unknown) => this.#log.warn({ err: errorMessage(err) }, 'closing failed'));
    }
    this.#clock.clearTimeout(deadline);
    this.#log.info({}, 'stopped');
    if (failure !== undefined)
      throw failure instanceof Error ? failure : new RavenError('RUNNABLE_FAILED', errorMessage(failure));
  }

  /** A server's run; one that fails (stops serving on its own) stops the manager like any runnable. */
  #runServer(server: Runnable, stop: AbortSignal, hardStop: AbortSignal, fail: (err: unknown) => void): Promise<void> {
    return Promise.resolve()
      .then(() => server.start(stop, { hardStop }))
      .catch((err: unknown) => {
        this.#log.error({ server: server.name, err: errorMessage(err) }, 'server failed: stopping the manager');
        fail(err);
      });
  }

  /** Stops the servers (all at once) and waits for them; past the shutdown deadline they are told to hurry. */
  async #stopServers(
    runs: Promise<void>[],
    stop: AbortController,
    hardStop: AbortController,
    deadline: AbortSignal,
  ): Promise<void> {
    const onDeadline = (): void => hardStop.abort(deadline.reason);
    deadline.addEventListener('abort', onDeadline, { once: true });
    if (deadline.aborted) onDeadline();
    stop.abort();
    await Promise.all(runs);
    deadline.removeEventListener('abort', onDeadline);
  }

  async #waitForSync(stop: AbortSignal): Promise<boolean> {
    const timeout = new AbortController();
    const timer = this.#clock.setTimeout(() => timeout.abort(), this.#syncMs);
    const signal = AbortSignal.any([stop, timeout.signal]);
    // One wait per informer listens on it.
    setMaxListeners(0, signal);
    try {
      return await this.#informers.waitForCacheSync(signal);
    } finally {
      this.#clock.clearTimeout(timer);
    }
  }

  /** Runs the election; leader-only runnables run while leading. Losing the lease (not a stop) fails the manager. */
  #elect(
    stop: AbortSignal,
    entries: Entry[],
    graceful: AbortController,
    hard: AbortSignal,
    launch: (e: Entry[], stop: AbortSignal, hard: AbortSignal) => void,
    fail: (err: unknown) => void,
  ): Promise<void> {
    return this.#elector!.run(stop, {
      onStartedLeading: (leaderSignal) => {
        // Won the Lease while stopping: start() no longer waits for new runs, so start none (the Lease is released
        // next).
        if (graceful.signal.aborted) return;
        this.#log.info({}, 'leading: starting leader-only runnables');
        // Graceful stop drains while the Lease is still renewed; a lost lease aborts in-flight work at once.
        launch(entries, AbortSignal.any([graceful.signal, leaderSignal]), AbortSignal.any([hard, leaderSignal]));
      },
      onStoppedLeading: () => {
        if (!stop.aborted)
          fail(
            new RavenError('LEADER_LOST', 'lost the leader lease: stopping so a fresh process can rejoin the election'),
          );
      },
      onNewLeader: (identity) => this.#log.info({ leader: identity }, 'leader observed'),
    });
  }
}

/**
 * Readiness of the caches once synced: every informer has listed or had a watch open within `afterMs` (a cache that
 * cannot reach the API server goes stale silently; its controllers would act on an old world, or on nothing new).
 */
function informersCheck(informers: SharedInformerFactory, afterMs: number): () => string | undefined {
  return () => {
    const stale = informers.health().filter((h) => h.failingSince !== undefined && h.failingForMs >= afterMs);
    if (stale.length === 0) return undefined;
    return stale
      .map(
        (h) =>
          `${h.informer}: no successful list or watch for ${(h.failingForMs / 1000).toFixed(1)} s (${h.lastError ?? 'failing'})`,
      )
      .join('; ');
  };
}

/**
 * A server that already listens, as a runnable for {@link Manager.addServer}: it serves until stopped, then `close`
 * runs (bounded by nothing but the server itself: an HTTP server closes once its connections end).
 */
export function listeningServer(name: string, close: () => Promise<void>): Runnable {
  return {
    name,
    start: (signal) =>
      new Promise<void>((resolve, reject) => {
        const stop = (): void => void close().then(resolve, reject);
        if (signal.aborted) stop();
        else signal.addEventListener('abort', stop, { once: true });
      }),
  };
}
