import { decayedRate, type Demand } from './pools.ts';

/** What adaptive sizing reads of the configuration: the bounds and the two windows (`portPools.*`). */
export interface SizingConfig {
  min: number;
  max: number;
  demandWindowSeconds: number;
  trimIdleSeconds: number;
}

/** A pool's adaptive target and why: the free ports it should hold now, and whether its surplus may go. */
export interface PoolTarget {
  /** Free ports wanted now, from `min` to `max`. */
  target: number;
  /** Whether no pod has taken from the pool for `trimIdleSeconds`: only then is a surplus above the target trimmed. */
  idle: boolean;
  /** Expected takes over one refill: the decayed take rate × the refill time measured, rounded up. */
  lead: number;
  /** Ports to keep for pods that may come back: the most its pods held since it last idled, less what they hold. */
  keep: number;
}

/** Before any refill was measured, one is taken to last this long. */
export const DEFAULT_REFILL_SECONDS = 1;

/**
 * A pool's free-port target under adaptive sizing (docs/pools.md, "Adaptive sizing"):
 * `target = clamp(max(lead, keep), min, max)` where `lead = ⌈rate × refillSeconds⌉` covers the takes expected while
 * one refill is made, and `keep = peak − held` (0 once idle) holds, while the pool is in use, the ports of pods that
 * went for the next ones instead of deleting and re-creating them. Pure: reads its arguments only.
 *
 * @example
 * // 3 takes/s, refills take 2 s, 10 held at most of which 4 still are: max(6, 6) = 6
 * poolTarget({ rate: 3, lastTake: 0, held: 4, peak: 10 }, sizing, 2, 0) // → { target: 6, idle: false, lead: 6, keep: 6 }
 */
export function poolTarget(
  demand: Readonly<Demand>,
  sizing: SizingConfig,
  refillSeconds: number,
  now: number,
): PoolTarget {
  const idle = now - demand.lastTake >= sizing.trimIdleSeconds * 1000;
  const rate = decayedRate(demand, sizing.demandWindowSeconds * 1000, now);
  const lead = Math.max(0, Math.ceil(rate * refillSeconds - 1e-9));
  const keep = idle ? 0 : Math.max(0, demand.peak - demand.held);
  const target = Math.min(sizing.max, Math.max(sizing.min, lead, keep));
  return { target, idle, lead, keep };
}
