/**
 * @raven/cluster-sim (the test wing, not the product): the rest of a Kubernetes cluster for `raven dev` and the
 * end-to-end tests — what kubelets, kube-scheduler and kube-controller-manager would do — as a client of the API
 * like any controller (it never imports the embedded API server). Built from Raven's own runtime: level-triggered
 * reconcilers on keys fed by shared informers. Imports core, kube/* and controller.
 *
 * Contract:
 * - **Nodes**: each configured node exists, with kubelet labels (`kubernetes.io/hostname`, `kubernetes.io/os`,
 *   `node.kubernetes.io/instance-type`…) plus its own, InternalIP `127.0.1.N` and Hostname addresses, capacity and a
 *   Ready condition. A deleted node is registered again. No heartbeats.
 * - **Scheduler**: a pod without `spec.nodeName` (default scheduler, not terminating or finished) is bound with a
 *   `pods/binding` POST to the schedulable (Ready, not cordoned) node matching its `nodeSelector` that runs the fewest
 *   pods. None fits → `PodScheduled=False/Unschedulable` and a `FailedScheduling` Warning Event; a node change
 *   looks again.
 * - **Kubelet** (pods bound to a simulated node): without the VIF annotation (and `requireVif`, not hostNetwork) →
 *   Pending, ContainerCreating, not Ready; else Running and Ready with `podIP`/`podIPs` from the annotation's
 *   `ips[].address` (hostNetwork: the node's IP; set once, never changed), `hostIP`, `startTime`, ready running
 *   containers. `restartPolicy: Never` + annotation `raven.test/exit-after-ms` → Succeeded that long after running.
 *   Status is written only when it changes. A pod deleted with a grace period is removed (`gracePeriodSeconds: 0`)
 *   once the grace has passed, capped by `deleteGraceMs`; without one the server removes it itself.
 * - **EndpointSlices**: a Service with a selector gets `<service>-<hash>` (labels `kubernetes.io/service-name`,
 *   `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io`; owner: the Service; IPv4) listing
 *   its namespace's matching pods that have an IP, with ready/serving/terminating as upstream and the ports with
 *   targetPort resolved (number, or the pod's named container port). Pods with different resolved ports, or more
 *   than `maxEndpointsPerSlice`, get further slices. Slices follow pod changes; slices of a Service gone or without a
 *   selector are deleted; other managers' slices are never touched. Loopback/link-local pod IPs (hostNetwork pods on
 *   simulated nodes) are left out: the API refuses them in a slice.
 * - **Namespaces**: a terminating namespace whose pods, services and slices are gone loses the `kubernetes`
 *   finalizer (`PUT namespaces/<name>/finalize`); other finalizers are kept. The content itself is deleted by the API
 *   server (the embedded one also drops the finalizer), so here the kubelet's removal of terminating pods is what
 *   lets a namespace with running pods go.
 * - **Deployments** (no ReplicaSets): a Deployment's pods (`<name>-<hash>-xxxxx`, its controller owner reference and
 *   `pod-template-hash` label) are kept at `spec.replicas`, all of the current template; pods of an older template
 *   are replaced at once (no surge or unavailability budget). The status counts replicas, updated, ready and
 *   available pods, with an `Available` condition.
 * - Run the controllers with {@link ClusterSimulator.run}, or add {@link ClusterSimulator.controllers} to a
 *   Manager with `leaderOnly: false`. Give the simulator its own informer factory and a client with a high QPS.
 */
export { ClusterSimulator, type ClusterSimulatorOptions } from './simulator.ts';
export { type SimNode, type SimNodeInput } from './nodes.ts';
export { exitAfterAnnotation, vifIps } from './pod-status.ts';
export { managedBy as endpointSliceManagedBy } from './slices.ts';
export { podTemplateHashLabel } from './deployments.ts';
export {
  DataplaneRuntime,
  podNetnsName,
  assertCanRunDataplane,
  type DataplaneRuntimeOptions,
} from './runtime/sandboxes.ts';
export {
  execPlugin,
  execList,
  findPlugin,
  CniCallError,
  type SandboxCall,
  type PluginRun,
} from './runtime/cni-exec.ts';
