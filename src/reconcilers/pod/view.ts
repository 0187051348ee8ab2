import type { PodPorts } from './ports.ts';
import type { RecordedPort } from './port-record.ts';
import type { Warm } from './warm.ts';

/** A pod's port as the pod module knows it: Raven's record, and whether it came warm and its claim is pending. */
export interface PodPortView {
  port: RecordedPort;
  warm: boolean;
  claimPending: boolean;
}

/** One warm pool as the view shows it. */
export interface PoolSummary {
  node: string;
  networkId: string;
  subnetIds: readonly string[];
  securityGroups: readonly string[];
  free: number;
  taken: number;
  /** A refill is in flight. */
  refilling: boolean;
  /** How long the last refill's bulk create took (ms); undefined before one. */
  lastRefillMs?: number | undefined;
}

/** What the pod module shows of its record and pools (read-only; the topology view reads it). */
export interface PodModuleView {
  portOf(podUid: string): PodPortView | undefined;
  pools(): PoolSummary[];
  /** Every recorded pod port (a security group's members are counted over them). */
  ports(): RecordedPort[];
}

/** The pod module's view over its record and, with warm pools, the pools and their pending claims. */
export function podModuleView(ports: PodPorts, warm: Warm | undefined): PodModuleView {
  return {
    portOf: (uid) => {
      const port = ports.record.forPod(uid);
      if (!port) return undefined;
      const claimPending = warm?.claims.get(port.id) !== undefined;
      return { port, warm: claimPending || (warm?.pools.tookWarm(port.id) ?? false), claimPending };
    },
    pools: () =>
      (warm?.pools.nodes() ?? []).flatMap((node) =>
        warm!.pools.statesOf(node).map((p) => ({
          node: p.node,
          networkId: p.networkId,
          subnetIds: p.subnetIds,
          securityGroups: p.securityGroups,
          free: p.free.length,
          taken: p.demand.held,
          refilling: warm!.pools.refillOf(p.key).refilling,
          lastRefillMs: warm!.pools.refillOf(p.key).lastMs,
        })),
      ),
    ports: () => ports.record.all(),
  };
}
