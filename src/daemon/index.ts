/**
 * daemon: the composition root: the CLI, process logger, HTTP binding of the apps. Imports anything of the product
 * (never the development tools of packages/); nothing imports it except tests, benchmarks and the development tools.
 */
export { main, buildCli } from './cli.ts';
export { listen, nodeHandler, type RunningHttpServer } from './http-server.ts';
export { createMetrics, type CreateMetricsOptions, type Metrics } from './metrics.ts';
export { createOpsApp, listenOps, type OpsAppOptions, type ListenOpsOptions } from './ops-server.ts';
