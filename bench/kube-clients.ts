/**
 * The two Kubernetes clients the informer benchmarks compare, pointed at a benchmark server: Raven's `KubeClient`
 * and @kubernetes/client-node 1.4.0's `KubeConfig`; and the pod trim Raven's informers would use.
 */
import * as k8s from '@kubernetes/client-node';
import type { KubeObject } from '../src/kube/api/index.ts';
import { KubeClient } from '../src/kube/client/index.ts';
import type { Target } from './http.ts';

function checkLoopback(target: Target): void {
  if (!/^https:\/\/127\.0\.0\.1:/.test(target.url) || !target.caPem)
    throw new Error(`informer benchmarks talk HTTPS to 127.0.0.1 only, not ${target.url}`);
}

/** Raven's client with rate limiting effectively off (the benchmark measures the cache, not the limiter). */
export function ravenClient(target: Target): KubeClient {
  checkLoopback(target);
  return new KubeClient({
    connection: {
      server: target.url,
      ca: target.caPem!,
      credentials: () => Promise.resolve({ kind: 'bearer', token: target.token }),
      source: 'bench',
    },
    qps: 1e6,
    burst: 1e6,
  });
}

/** client-node's configuration for the same server: CA data and a bearer token, as a kubeconfig would give. */
export function clientNodeConfig(target: Target): k8s.KubeConfig {
  checkLoopback(target);
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'bench',
        server: target.url,
        caData: Buffer.from(target.caPem!).toString('base64'),
        skipTLSVerify: false,
      },
    ],
    users: [{ name: 'bench', token: target.token }],
    contexts: [{ name: 'bench', cluster: 'bench', user: 'bench' }],
    currentContext: 'bench',
  });
  return kc;
}

/** The object without its undefined properties (an own property costs memory even when undefined). */
function defined<T extends object>(obj: T): T {
  return Object.fromEntries(Object.entries(obj).filter(([, v]) => v !== undefined)) as T;
}

interface PodParts {
  spec?: { nodeName?: string; hostNetwork?: boolean };
  status?: { phase?: string; podIP?: string; podIPs?: { ip: string }[]; hostIP?: string };
}

/** What Raven's reconcilers read of a pod; managedFields, containers, volumes, conditions… are dropped. */
export function trimPod(pod: KubeObject): KubeObject {
  const m = pod.metadata;
  const { spec = {}, status = {} } = pod as PodParts;
  return defined({
    apiVersion: pod.apiVersion,
    kind: pod.kind,
    metadata: defined({
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      labels: m.labels,
      annotations: m.annotations,
      deletionTimestamp: m.deletionTimestamp,
      finalizers: m.finalizers,
      ownerReferences: m.ownerReferences,
    }),
    spec: defined({ nodeName: spec.nodeName, hostNetwork: spec.hostNetwork }),
    status: defined({ phase: status.phase, podIP: status.podIP, podIPs: status.podIPs, hostIP: status.hostIP }),
  });
}
