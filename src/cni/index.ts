/**
 * cni: `raven-cni`, the CNI plugin on each node. ADD waits for the pod's VIF annotation, verifies the port it names
 * against Neutron (docs/vif-cni.md), and plugs the pod into the linuxbridge agent's bridge or OVS's integration bridge; DEL and CHECK undo and
 * check that. `raven node` (`node-daemon.ts`) runs the same calls for a thin plugin that forwards them over a unix
 * socket (`entry.ts`). Imports core, kube/api, kube/client, openstack and its own cni/spec.
 */
export { runPlugin, addResult, type PluginInvocation, type PluginOutcome, type AddTimings } from './plugin.ts';
export { main } from './main.ts';
export { runEntry } from './entry.ts';
export {
  serveNodeDaemon,
  startNodeDaemon,
  type ForwardedCall,
  type ForwardedAnswer,
  type NodeDaemonOptions,
} from './node-daemon.ts';
export { openNodeConnections, type NodeConnections } from './plugin.ts';
export { parseRavenCniConf, ravenCniConfSchema, ravenEntryOfConflist, type RavenCniConf } from './config.ts';
export { verifyPort, tapName, bridgeName, type PlugPlan, type NeutronView, type PodIdentity } from './verify.ts';
