import type { Logger } from '../../core/index.ts';
import { familySubnets, type ClusterNetworkSource } from '../network/index.ts';

/** What the sweep listed of the router's interfaces (`GcReport.networks`). */
interface ListedInterfaces {
  networks?: { routed: ReadonlySet<string> | undefined } | undefined;
}

/**
 * A check around each garbage-collection sweep: the cluster router must still have an interface on each subnet the
 * bootstrap attached to it (the shared pod subnet, the service subnet; each family). One that is gone — detached or
 * deleted out of band, or the router itself gone — makes the bootstrap verify and rebuild the cluster network now,
 * within one GC interval, instead of at its next recheck (`resyncPeriodSeconds`).
 */
export function clusterNetworkVerification(options: { cluster: ClusterNetworkSource; logger: Logger }): {
  before(): (report: ListedInterfaces) => string[];
} {
  return {
    before() {
      const known = options.cluster.current();
      return (report) => {
        const routed = report.networks?.routed;
        // The network the bootstrap ensured before the sweep listed, and still the same one.
        if (!known?.routerId || !routed || options.cluster.current() !== known) return [];
        const attached = [known.podSubnet, known.serviceSubnet].flatMap((s) =>
          s ? familySubnets(s).map((f) => f.subnetId) : [],
        );
        const missing = attached.filter((id) => !routed.has(id));
        if (missing.length === 0) return [];
        options.logger.warn(
          { routerId: known.routerId, subnets: missing },
          'the cluster router lost an interface outside Raven: verifying the cluster network',
        );
        options.cluster.recheck();
        return ['cluster network'];
      };
    },
  };
}
