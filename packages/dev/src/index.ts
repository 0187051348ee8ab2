/**
 * @raven/dev: what runs Raven on one machine without a cluster or a cloud — the embedded API server and the OpenStack
 * simulator bound to ports (with their kubeconfig, clouds.yaml, certificates and snapshots), `raven dev`, and the
 * `raven` command with the development tools' commands (`./cli.ts`). Not the product: the image never holds it.
 * This index loads neither `raven dev`'s composition nor the dataplane (`./dev.ts`, `./dataplane.ts`).
 */
export { addDevCommands, buildDevCli, main } from './cli.ts';
export { runApiServer, type RunApiServerOptions, type RunningApiServer } from './run-apiserver.ts';
export {
  runOpenStackSim,
  simCloudsYaml,
  type RunOpenStackSimOptions,
  type RunningOpenStackSim,
} from './run-openstack-sim.ts';
export { kubeconfigYaml, writeKubeconfig } from './kubeconfig.ts';
export { selfSignedCertificate, type TlsMaterial } from './tls.ts';
export {
  DEV_EXTERNAL_NETWORK,
  DEV_SERVICE_CIDR,
  ensureDevExternalNetwork,
  withExternalNetwork,
} from './dev-network.ts';
