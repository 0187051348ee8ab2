import { execFile, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { RavenError, type DeepReadonly, type Logger } from '../../../../src/core/index.ts';
import type { Pod } from '../../../../src/kube/api/index.ts';
import type { CniResult, NetConfList } from '../../../../src/cni/spec/index.ts';
import { execList, type SandboxCall } from './cni-exec.ts';
import { startResponder, stopResponder, type ResponderPort } from './responder.ts';

const sh = promisify(execFile);

/**
 * The network namespace of a pod's sandbox: one per pod incarnation, so a re-created pod never meets the old one. A
 * rig of its own names (the OVN rig's `rvo-pod-`) keeps two rigs' pods apart on one machine.
 */
export const podNetnsName = (podUid: string, prefix = 'raven-pod-'): string => `${prefix}${podUid}`;

export interface DataplaneRuntimeOptions {
  /** The nodes whose pods this runtime runs (their names are the Neutron agents' hosts). */
  nodes: readonly string[];
  /** The network configuration list the runtime runs for every pod (raven-cni first, then any chained plugins). */
  conflist: NetConfList;
  /** Where the plugins are (`CNI_PATH`). */
  pluginDirs: readonly string[];
  /** The pod namespaces' name prefix (default `raven-pod-`). */
  netnsPrefix?: string;
  /** Ports each pod's responder listens on when its containers declare none. Default TCP and UDP 8080. */
  defaultPorts?: readonly ResponderPort[];
  logger: Logger;
}

interface Sandbox {
  uid: string;
  netns: string;
  call: SandboxCall;
  result: CniResult | undefined;
  responder: ChildProcess | undefined;
  /** `performance.now()` when ADD was called and when it answered, and each plugin's stderr (its log). */
  add: SandboxAdd | undefined;
}

/** How one sandbox's CNI ADD went: for `raven dev`'s log and the dataplane benchmark. */
export interface SandboxAdd {
  startedAt: number;
  doneAt: number;
  logs: { plugin: string; stderr: string }[];
}

/** What the kubelet reports once a pod's sandbox is up. */
export interface SandboxStatus {
  podIps: string[];
}

/**
 * A container runtime stand-in for pods on real-dataplane nodes: per pod, a network namespace, the CNI configuration
 * list run exactly as containerd runs it (ADD on start, DEL on delete), and a responder inside. Its state is the
 * sandboxes it made, by pod key, as a runtime's is; `removeAll` tears every one down (a test's or `raven dev`'s end).
 * Needs root (network namespaces); {@link assertCanRunDataplane} says so clearly first.
 */
export class DataplaneRuntime {
  readonly #options: DataplaneRuntimeOptions;
  readonly #nodes: ReadonlySet<string>;
  readonly #sandboxes = new Map<string, Sandbox>();

  constructor(options: DataplaneRuntimeOptions) {
    assertCanRunDataplane();
    this.#options = options;
    this.#nodes = new Set(options.nodes);
  }

  /** Whether pods on `node` are this runtime's. */
  runs(node: string): boolean {
    return this.#nodes.has(node);
  }

  /**
   * The pod's sandbox, made when missing: a namespace, CNI ADD (raven-cni waits there for Raven's VIF), the
   * responder. A sandbox of an earlier pod with this key is removed first. A failure is undone with DEL and thrown:
   * the kubelet retries with backoff, as a real one does.
   */
  async ensure(key: string, pod: DeepReadonly<Pod>, signal: AbortSignal): Promise<SandboxStatus> {
    const uid = pod.metadata.uid ?? '';
    const existing = this.#sandboxes.get(key);
    if (existing?.uid === uid && existing.result) return { podIps: podIps(existing.result) };
    if (existing) await this.remove(key, signal);
    const netns = podNetnsName(uid, this.#options.netnsPrefix);
    const call: SandboxCall = {
      containerId: `raven-sim-${uid}`,
      netns: `/run/netns/${netns}`,
      ifName: 'eth0',
      args: {
        IgnoreUnknown: '1',
        K8S_POD_NAMESPACE: pod.metadata.namespace ?? '',
        K8S_POD_NAME: pod.metadata.name ?? '',
        K8S_POD_INFRA_CONTAINER_ID: `raven-sim-${uid}`,
        K8S_POD_UID: uid,
      },
    };
    const sandbox: Sandbox = { uid, netns, call, result: undefined, responder: undefined, add: undefined };
    this.#sandboxes.set(key, sandbox);
    await sh('ip', ['netns', 'add', netns]).catch((err: unknown) => {
      // Left by an earlier run of this runtime for the same pod: reuse it.
      if (!/File exists/.test(String(err))) throw err;
    });
    await sh('ip', ['-n', netns, 'link', 'set', 'lo', 'up']);
    const { conflist, pluginDirs } = this.#options;
    try {
      const startedAt = performance.now();
      const added = await execList(conflist, 'ADD', call, { dirs: pluginDirs, signal });
      sandbox.result = added.result;
      const logs = added.runs.map((r) => ({ plugin: r.type, stderr: r.stderr }));
      sandbox.add = { startedAt, doneAt: performance.now(), logs };
      for (const run of added.runs)
        if (run.stderr) this.#options.logger.debug({ pod: key, plugin: run.type, log: run.stderr.trim() }, 'CNI ADD');
      sandbox.responder = await startResponder(netns, pod.metadata.name ?? '', this.#ports(pod));
    } catch (err) {
      // Undone whole (DEL, namespace), so the next try starts clean.
      await this.remove(key, signal).catch(() => undefined);
      throw err;
    }
    return { podIps: podIps(sandbox.result) };
  }

  /** CNI DEL, the responder stopped, the namespace deleted. Nothing to do for a key without a sandbox. */
  async remove(key: string, signal?: AbortSignal): Promise<void> {
    const sandbox = this.#sandboxes.get(key);
    if (!sandbox) return;
    if (sandbox.responder) stopResponder(sandbox.responder);
    const { conflist, pluginDirs } = this.#options;
    await execList(conflist, 'DEL', sandbox.call, {
      dirs: pluginDirs,
      cached: sandbox.result,
      ...(signal ? { signal } : {}),
    });
    await sh('ip', ['netns', 'del', sandbox.netns]).catch((err: unknown) => {
      if (!/No such file/.test(String(err))) throw err;
    });
    this.#sandboxes.delete(key);
  }

  /** Every sandbox torn down, each tried even when another fails. */
  async removeAll(): Promise<void> {
    const results = await Promise.allSettled([...this.#sandboxes.keys()].map((key) => this.remove(key)));
    const failed = results.find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  /** How the ADD of the pod's current sandbox went, once it has. */
  addOf(key: string): SandboxAdd | undefined {
    return this.#sandboxes.get(key)?.add;
  }

  #ports(pod: DeepReadonly<Pod>): ResponderPort[] {
    // One listener per protocol and number: two names may declare the same port.
    const declared = [
      ...new Map(
        (pod.spec?.containers ?? []).flatMap((c) =>
          (c.ports ?? []).map((p) => {
            const protocol = p.protocol === 'UDP' ? ('UDP' as const) : ('TCP' as const);
            return [`${protocol}/${p.containerPort}`, { protocol, port: p.containerPort }] as const;
          }),
        ),
      ).values(),
    ];
    return declared.length > 0
      ? declared
      : [
          ...(this.#options.defaultPorts ?? [
            { protocol: 'TCP', port: 8080 },
            { protocol: 'UDP', port: 8080 },
          ]),
        ];
  }
}

/** The result's addresses, without their prefix: `status.podIP(s)`. */
function podIps(result: CniResult | undefined): string[] {
  return (result?.ips ?? []).map((ip) => ip.address.split('/')[0] ?? '').filter((ip) => ip !== '');
}

/** The dataplane runtime makes network namespaces and veth pairs: root only, refused clearly otherwise. */
export function assertCanRunDataplane(): void {
  if (process.getuid?.() !== 0)
    throw new RavenError(
      'DATAPLANE_NEEDS_ROOT',
      'the real dataplane creates network namespaces and veth pairs for pods, which needs root; run as root',
    );
}
