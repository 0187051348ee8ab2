import type { ModuleContext } from '../network/index.ts';
import { ClusterNetworkBootstrap } from './bootstrap.ts';

/**
 * The cluster network's module: the bootstrap (router, shared pod subnet, service subnet), ensured when Raven leads
 * and verified every `recheckEveryMs`. It gives every other module the {@link ClusterNetworkSource} and its `ready`
 * channel (the network first known, or rebuilt).
 */
export function setupClusterNetwork(ctx: ModuleContext, o: { recheckEveryMs: number }): ClusterNetworkBootstrap {
  const cluster = new ClusterNetworkBootstrap({
    cloud: ctx.cloud,
    config: ctx.config,
    recheckEveryMs: o.recheckEveryMs,
    clock: ctx.clock,
    logger: ctx.logger,
  });
  ctx.manager.add(cluster);
  return cluster;
}
