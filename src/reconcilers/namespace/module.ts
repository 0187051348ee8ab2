import { allKeys, newControllerManagedBy } from '../../controller/index.ts';
import type { Namespace } from '../../kube/api/index.ts';
import type { Lister, SharedInformer } from '../../kube/cache/index.ts';
import {
  NamespaceNetworks,
  NamespaceSubnetStrategy,
  SharedSubnetStrategy,
  type ClusterNetwork,
  type ClusterNetworkSource,
  type ModuleContext,
  type SubnetStrategy,
  type SubnetStrategyName,
} from '../network/index.ts';
import type { EventChannel } from '../../controller/index.ts';
import { NamespaceReconciler } from './reconciler.ts';
import { namespaceNetworkVerification } from './verify.ts';

/** The subnet strategies, by `subnets.strategy`: the one place a strategy is chosen. */
const subnetStrategies = {
  shared: ({ cluster }) => new SharedSubnetStrategy(cluster),
  namespace: ({ namespaces, networks }) => new NamespaceSubnetStrategy(namespaces, networks),
} satisfies Record<
  SubnetStrategyName,
  (deps: {
    cluster: ClusterNetworkSource;
    namespaces: Lister<Namespace>;
    networks: NamespaceNetworks;
  }) => SubnetStrategy
>;

export interface NamespaceModuleInputs {
  namespaces: SharedInformer<Namespace>;
  cluster: ClusterNetworkSource & { ready: EventChannel<ClusterNetwork> };
  /** `translations.namespaces`: off, no namespace network is made (the strategy still answers from its record). */
  translate: boolean;
  workers: number;
}

/** What the namespace module gives the others. */
export interface NamespaceModule {
  /** Raven's record of each namespace's network (written by the namespace reconciler only); `changed` on each change. */
  networks: NamespaceNetworks;
  /** Where a pod's or a Service's namespace gets its subnet: the one strategy `subnets.strategy` names. */
  subnets: SubnetStrategy;
  /** With the namespace controller: the check around each sweep that finds a namespace network changed outside Raven. */
  verification?: ReturnType<typeof namespaceNetworkVerification> | undefined;
}

/**
 * Namespaces' module: the subnet strategy every pod and Service reads, and — with the `namespace` strategy and the
 * translation on — the namespace controller that makes each namespace's network, subnet and router interface.
 */
export function setupNamespaces(ctx: ModuleContext, o: NamespaceModuleInputs): NamespaceModule {
  const networks = new NamespaceNetworks();
  const { subnets } = ctx.config;
  const strategy = subnetStrategies[subnets.strategy]({
    cluster: o.cluster,
    namespaces: o.namespaces.lister(),
    networks,
  });
  if (o.translate && subnets.strategy === 'namespace') {
    const reconciler = new NamespaceReconciler({
      cloud: ctx.cloud,
      config: ctx.config,
      subnets: subnets.namespace,
      cluster: o.cluster,
      networks,
      client: ctx.client,
      namespaces: o.namespaces.lister(),
      logger: ctx.logger.child({ reconciler: 'namespace' }),
    });
    newControllerManagedBy(ctx.manager)
      .named('namespace')
      .for(o.namespaces)
      .watchesChannel(o.cluster.ready, allKeys(o.namespaces))
      .watchesChannel(networks.suspect, (e) => [e.namespace])
      .withOptions(ctx.controllerOptions(o.workers))
      .complete(reconciler.reconcile);
    return {
      networks,
      subnets: strategy,
      verification: namespaceNetworkVerification({ networks, logger: ctx.logger.child({ component: 'gc' }) }),
    };
  }
  return { networks, subnets: strategy };
}
