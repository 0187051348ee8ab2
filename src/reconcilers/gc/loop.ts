import { errorMessage, realClock, type Clock, type Logger } from '../../core/index.ts';
import type { Runnable } from '../../controller/index.ts';
import type { ClusterNetworkSource } from '../network/index.ts';
import type { GarbageCollector, GcReport } from './collector.ts';

/**
 * A check that runs around each sweep and reads what the sweep listed instead of listing again. `before` is called
 * before the sweep lists anything (state taken then is older than the list); what it returns is called after the
 * sweep, and says what it found (keys of the objects it acted on).
 */
export interface SweepCheck {
  before(): (report: GcReport) => readonly string[];
}

/** One round: the sweep's report, and what the checks found. */
export interface GcRound {
  report: GcReport;
  findings: string[];
}

export interface GarbageCollectionLoopOptions {
  collector: GarbageCollector;
  cluster: ClusterNetworkSource;
  intervalMs: number;
  /** The verifications of pod ports, security groups and load balancers. */
  checks?: readonly SweepCheck[];
  /** After every round: its report, or undefined when it failed (metrics). */
  onRound?: ((report: GcReport | undefined) => void) | undefined;
  clock?: Clock;
  logger: Logger;
}

/**
 * The garbage collector as a leader-only runnable: once the cluster network is known (the sweep detaches namespace
 * networks from its router), a sweep with its checks at once and then every `intervalMs`. A failed round is logged
 * and counted; the next one comes at the usual time.
 */
export class GarbageCollectionLoop implements Runnable {
  readonly name = 'garbage-collector';
  readonly #o: GarbageCollectionLoopOptions;
  readonly #clock: Clock;

  constructor(options: GarbageCollectionLoopOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
  }

  /** 1 until the first round has ended, then 0: the manager's view of this runnable's work. */
  pending(): number {
    return this.#rounds > 0 ? 0 : 1;
  }

  #rounds = 0;

  async start(signal: AbortSignal): Promise<void> {
    if (!(await this.#o.cluster.whenReady(signal))) return;
    while (!signal.aborted) {
      try {
        await this.round(signal);
      } catch (err) {
        if (signal.aborted) return;
        this.#o.onRound?.(undefined);
        this.#o.logger.warn({ err: errorMessage(err) }, 'garbage collection failed; next round');
      }
      this.#rounds++;
      await this.#clock.sleep(this.#o.intervalMs, signal).catch(() => undefined);
    }
  }

  /**
   * One round: the checks' `before`, the sweep, the checks' results. Undefined while the cluster network is unknown.
   */
  async round(signal?: AbortSignal): Promise<GcRound | undefined> {
    const cluster = this.#o.cluster.current();
    if (!cluster) return undefined;
    const after = (this.#o.checks ?? []).map((check) => check.before());
    const report = await this.#o.collector.collect({ routerId: cluster.routerId, signal });
    this.#o.onRound?.(report);
    return { report, findings: after.flatMap((check) => check(report)) };
  }
}
