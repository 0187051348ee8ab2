/**
 * daemon: the composition root: the CLI, process logger, HTTP binding of the apps, snapshots. Imports anything;
 * nothing imports it except tests and benchmarks.
 */
export { main, buildCli } from './cli.ts';
export { runApiServer, type RunApiServerOptions, type RunningApiServer } from './run-apiserver.ts';
export {
  runOpenStackSim,
  simCloudsYaml,
  type RunOpenStackSimOptions,
  type RunningOpenStackSim,
} from './run-openstack-sim.ts';
export { listen, nodeHandler, type RunningHttpServer } from './http-server.ts';
export { kubeconfigYaml, writeKubeconfig } from './kubeconfig.ts';
export { createMetrics, type CreateMetricsOptions, type Metrics } from './metrics.ts';
export { createOpsApp, listenOps, type OpsAppOptions, type ListenOpsOptions } from './ops-server.ts';
