import { realClock, type Clock } from '../../core/index.ts';
import type { ReconcileResult } from '../../controller/index.ts';
import type { Cloud } from '../network/index.ts';
import { recordedPort } from './port-record.ts';
import type { PortPools } from './pools.ts';
import type { PodPorts } from './ports.ts';

/**
 * How long after a port is given back it is read again: the node's agent reports an unplugged port DOWN within its
 * polling interval (2 s by default for the Open vSwitch and Linux bridge agents), a revision Raven would not see.
 */
export const REFRESH_AFTER_MS = 2_000;

/** A port given back is read at the latest this many settle times after it (see the reconcile). */
const LATEST = 4;

/** Port ids per read (`GET ports?id=…&id=…`): a URL of 50 ids stays well within what servers accept. */
const PER_READ = 50;

export interface PortRefreshOptions {
  cloud: Cloud;
  pools: PortPools;
  /** Raven's pod ports in Neutron, written through. */
  ports: PodPorts;
  afterMs?: number;
  clock?: Clock;
}

/**
 * Reads again, batched per node, the free ports pods gave back (`PortPools.staleOn`), so that a claim's `If-Match`
 * names the revision Neutron has. Without it the claim of a recycled port is answered 412 (its revision moved when
 * the agent set it DOWN, or when a cold create was tagged), then re-read and sent again: three requests instead of
 * one, per pod. The read changes nothing a claim relies on: the claim is still a compare-and-swap, and a read that
 * shows another owner takes the port out of its pool (`PortPools.refresh`). Keyed by node; a read failure is retried
 * by the work queue, and a port taken before its read is claimed as before (412, re-read, update).
 */
export class PortRefresh {
  readonly #o: PortRefreshOptions;
  readonly #clock: Clock;
  readonly #afterMs: number;

  constructor(options: PortRefreshOptions) {
    this.#o = options;
    this.#clock = options.clock ?? realClock;
    this.#afterMs = options.afterMs ?? REFRESH_AFTER_MS;
  }

  readonly reconcile = async (node: string, signal: AbortSignal): Promise<ReconcileResult | void> => {
    const now = this.#clock.now();
    const stale = this.#o.pools.staleOn(node);
    if (stale.length === 0) return;
    // One read for the node once its pods stopped giving ports back for a while (a wave's ports in one request),
    // and at the latest a few settle times after the first (ports keep coming back under a steady churn).
    const newest = Math.max(...stale.map((s) => s.since));
    const oldest = Math.min(...stale.map((s) => s.since));
    const readAt = Math.min(newest + this.#afterMs, oldest + LATEST * this.#afterMs);
    if (now < readAt) return { requeueAfterMs: readAt - now };
    const due = stale.filter((s) => now - s.since >= this.#afterMs).map((s) => s.port);
    for (let i = 0; i < due.length; i += PER_READ) {
      const batch = due.slice(i, i + PER_READ);
      const read = await this.#o.cloud.neutron.ports.list(
        { id: batch.map((p) => p.id) },
        { signal, priority: 'background' },
      );
      const byId = new Map(read.map((p) => [p.id, p]));
      for (const port of batch) {
        const fresh = byId.get(port.id);
        // Not in the answer: gone, which its claim (404) or the next sweep finds; the pool's copy stays as it was.
        if (!fresh) this.#o.pools.refresh(port);
        else if (this.#o.pools.refresh(recordedPort(fresh))) this.#o.ports.seen(fresh);
      }
    }
    const left = stale.filter((s) => now - s.since < this.#afterMs);
    return left.length === 0 ? undefined : { requeueAfterMs: this.#afterMs };
  };
}
