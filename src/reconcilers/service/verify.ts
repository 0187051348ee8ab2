import type { Logger } from '../../core/index.ts';
import type { EventChannel } from '../../controller/index.ts';
import { keyOf, type Service } from '../../kube/api/index.ts';
import type { Lister } from '../../kube/cache/index.ts';
import type { ReconcilerConfig } from '../network/index.ts';
import type { ConvergedLoadBalancers } from './converged.ts';
import { LB_FINALIZER, wantsLoadBalancer } from './types.ts';

/** A Service whose load balancer (or a part of it) the garbage collector's sweep did not find. */
export interface LoadBalancerGone {
  key: string;
}

export interface LoadBalancerVerificationOptions {
  services: Lister<Service>;
  config: Pick<ReconcilerConfig, 'emulateKubeProxy' | 'loadBalancer'>;
  /** Where a Service found without its load balancer goes: the service controller's queue. */
  loadBalancersGone: EventChannel<LoadBalancerGone>;
  /** What each Service's last converged pass left: a part missing from the sweep's lists queues the Service too. */
  converged?: ConvergedLoadBalancers | undefined;
  logger: Logger;
}

/**
 * A check around the garbage collector's sweep (its `SweepCheck`): every Service that has had a load balancer (it
 * carries the finalizer) and still wants one, whose load balancer the sweep's list of Octavia did not hold, is sent to
 * the service controller — so a load balancer deleted out of band is rebuilt within a GC interval, not at the next
 * resync. So is one whose listener, pool, member, VIP port or floating IP — as its last converged pass left them —
 * the sweep did not find (deleted out of band: the reconcile makes it again). The Services and their parts are read before the
 * sweep lists, so one changed meanwhile is at worst reconciled once more (it finds everything, and changes nothing).
 */
export function loadBalancerVerification(options: LoadBalancerVerificationOptions): {
  before(): (report: {
    loadBalancerOwners?: ReadonlySet<string> | undefined;
    loadBalancerParts?: ReadonlySet<string> | undefined;
  }) => string[];
} {
  return {
    before() {
      const built = options.services
        .list()
        .filter(
          (svc) =>
            svc.metadata.finalizers?.includes(LB_FINALIZER) &&
            !svc.metadata.deletionTimestamp &&
            wantsLoadBalancer(svc, options.config),
        )
        .map((svc) => ({ key: keyOf(svc), uid: svc.metadata.uid ?? '', parts: options.converged?.get(keyOf(svc)) }));
      return (report) => {
        const owners = report.loadBalancerOwners;
        if (!owners) return [];
        const gone = built.filter((s) => !owners.has(s.uid));
        const seen = report.loadBalancerParts;
        const changed = built.filter((s) => owners.has(s.uid) && seen && s.parts?.some((id) => !seen.has(id)));
        for (const g of [...gone, ...changed]) options.loadBalancersGone.send({ key: g.key });
        if (gone.length > 0) {
          const sample = gone.slice(0, 5).map((g) => g.key);
          options.logger.warn({ services: gone.length, sample }, 'services whose load balancer is gone from Octavia');
        }
        if (changed.length > 0) {
          const sample = changed.slice(0, 5).map((g) => g.key);
          options.logger.warn(
            { services: changed.length, sample },
            'services whose load balancer lost a listener, pool, member, VIP port or floating IP outside Raven',
          );
        }
        return [...gone, ...changed].map((g) => g.key);
      };
    },
  };
}
