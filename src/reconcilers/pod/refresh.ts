import { realClock, type Clock } from '../../core/index.ts';
import type { ReconcileResult } from '../../controller/index.ts';
import type { Port, RequestPriority } from '../../openstack/index.ts';
import type { Cloud } from '../network/index.ts';
import { recordedPort, type RecordedPort } from './port-record.ts';
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
  /** Whether a pod with this uid exists and wants a port: a read showing its claim takes the port from its pool. */
  portWanted: (uid: string) => boolean;
  afterMs?: number;
  clock?: Clock;
}

/**
 * Reads again, batched per node, the free ports pods gave back (`PortPools.staleOn`), so that a claim's `If-Match`
 * names the revision Neutron has. Without it the claim of a recycled port is answered 412 (its revision moved when
 * the agent set it DOWN, or when a cold create was tagged), then re-read and sent again: three requests instead of
 * one, per pod. The read changes nothing a claim relies on: the claim is still a compare-and-swap, and a read that
 * shows another live pod's claim takes the port out of its pool (`PortPools.refresh`). Keyed by node; a read failure is retried
 * by the work queue.
 *
 * A pod that takes a port before its read (a wave that comes back at once) has its claim read it first
 * ({@link read}): with the other claims' ports of the node asked for at the same time and every free port of the node
 * not read since, in one request, so the rest of the wave takes ports already read; claims of ports in a read under
 * way wait for its answer instead of reading again.
 */
export class PortRefresh {
  readonly #o: PortRefreshOptions;
  readonly #clock: Clock;
  readonly #afterMs: number;
  /** Reads under way, by node: the ids each asked for, and its answer by id. */
  readonly #reading = new Map<string, { ids: ReadonlySet<string>; answer: Promise<Map<string, Port>> }[]>();
  /** Claims' reads asked for in this turn of the event loop, by node: one request for them at its end. */
  readonly #asked = new Map<string, { ids: Set<string>; answer: Promise<Map<string, Port>> }>();

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
    const due = stale.filter((s) => now - s.since >= this.#afterMs).map((s) => s.port.id);
    for (let i = 0; i < due.length; i += PER_READ)
      await this.#read(node, due.slice(i, i + PER_READ), signal, 'background');
    const left = stale.filter((s) => now - s.since < this.#afterMs);
    return left.length === 0 ? undefined : { requeueAfterMs: this.#afterMs };
  };

  /**
   * A port a pod took before its read, as Neutron has it now (undefined: gone): read with the other claims' ports of
   * its node asked for in the same turn of the event loop (claims dequeued together) and the node's free ports not
   * read since, or taken from a read of it under way.
   */
  async read(port: RecordedPort, signal: AbortSignal): Promise<Port | undefined> {
    const node = port.hostId;
    const under = this.#reading.get(node)?.find((r) => r.ids.has(port.id));
    if (under) return (await under.answer).get(port.id);
    let batch = this.#asked.get(node);
    if (!batch || batch.ids.size >= PER_READ) {
      const ids = new Set<string>();
      const answer = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        if (this.#asked.get(node)?.ids === ids) this.#asked.delete(node);
        const others = this.#o.pools
          .staleOn(node)
          .map((s) => s.port.id)
          .filter((id) => !ids.has(id) && !this.#reading.get(node)?.some((r) => r.ids.has(id)));
        return this.#read(node, [...ids, ...others.slice(0, Math.max(0, PER_READ - ids.size))], signal, 'critical');
      });
      batch = { ids, answer };
      this.#asked.set(node, batch);
    }
    batch.ids.add(port.id);
    return (await batch.answer).get(port.id);
  }

  /** Reads the ports, and refreshes those still free in their pools with what Neutron says. */
  #read(
    node: string,
    ids: readonly string[],
    signal: AbortSignal,
    priority: RequestPriority,
  ): Promise<Map<string, Port>> {
    const answer = (async () => {
      const read = await this.#o.cloud.neutron.ports.list({ id: [...ids] }, { signal, priority });
      const byId = new Map(read.map((p) => [p.id, p]));
      for (const port of byId.values())
        if (this.#o.pools.refresh(recordedPort(port), this.#o.portWanted)) this.#o.ports.seen(port);
      // Not in the answer: gone, which its claim (404) or the next sweep finds; no longer one to read.
      for (const id of ids) if (!byId.has(id)) this.#o.pools.forgetStale(id);
      return byId;
    })();
    const entry = { ids: new Set(ids), answer };
    this.#reading.set(node, [...(this.#reading.get(node) ?? []), entry]);
    const done = () => {
      const left = (this.#reading.get(node) ?? []).filter((r) => r !== entry);
      if (left.length > 0) this.#reading.set(node, left);
      else this.#reading.delete(node);
    };
    answer.then(done, done);
    return answer;
  }
}
