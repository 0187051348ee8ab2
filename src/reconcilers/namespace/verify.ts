import type { Logger } from '../../core/index.ts';
import { familySubnets, type NamespaceNetworks } from '../network/index.ts';

/** What the sweep listed of the cluster's networks (`GcReport.networks`). */
interface ListedNetworks {
  networks?:
    | { networks: ReadonlySet<string>; subnets: ReadonlySet<string>; routed: ReadonlySet<string> | undefined }
    | undefined;
}

/**
 * A check around each garbage-collection sweep: every namespace network Raven recorded must still be in Neutron with
 * its subnets, each attached to the cluster router. One that is not — deleted or detached out of band — is sent on
 * `suspect`, and the namespace reconciler verifies and rebuilds it (the same network, subnets and CIDRs where they
 * are left) within one GC interval, not at the next resync. The records are taken before the sweep lists, so a
 * network made meanwhile is not taken for a lost one, and one torn down meanwhile (its namespace gone) is left to its
 * teardown.
 */
export function namespaceNetworkVerification(options: { networks: NamespaceNetworks; logger: Logger }): {
  before(): (report: ListedNetworks) => string[];
} {
  return {
    before() {
      const recorded = options.networks.all();
      return (report) => {
        const listed = report.networks;
        if (!listed) return [];
        // Still recorded as it was: a network torn down meanwhile (its namespace gone) is no loss.
        const now = new Set(options.networks.all().map((n) => n.networkId));
        const lost = recorded.filter((n) => {
          const subnets = familySubnets(n).map((s) => s.subnetId);
          return (
            now.has(n.networkId) &&
            (!listed.networks.has(n.networkId) ||
              subnets.some((id) => !listed.subnets.has(id) || (listed.routed && !listed.routed.has(id))))
          );
        });
        for (const { namespace, networkId } of lost) {
          options.logger.warn({ namespace, networkId }, 'namespace network changed outside Raven: verifying it');
          options.networks.suspect.send({ namespace });
        }
        return lost.map((n) => n.namespace);
      };
    },
  };
}
