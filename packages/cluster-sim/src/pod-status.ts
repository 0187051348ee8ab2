import { isIP } from 'node:net';
import type { DeepReadonly } from '../../../src/core/index.ts';
import {
  rfc3339,
  type ContainerStatus,
  type Pod,
  type PodCondition,
  type PodPhase,
  type PodStatus,
} from '../../../src/kube/api/index.ts';

/** A pod annotation (ms) that makes a `restartPolicy: Never` pod's containers exit 0 that long after they started. */
export const exitAfterAnnotation = 'raven.test/exit-after-ms';

/**
 * The IPs in a VIF annotation (`{"version":1,"ips":[{"address":"10.0.0.5","prefixLength":24,…}],…}`), in order and
 * without duplicates. Read defensively, as a CNI plugin would: anything malformed counts as "no VIF yet", never a
 * throw.
 */
export function vifIps(annotation: string | undefined): string[] {
  if (!annotation) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(annotation);
  } catch {
    return [];
  }
  const ips = (parsed as { ips?: unknown } | null)?.ips;
  if (!Array.isArray(ips)) return [];
  const out: string[] = [];
  for (const entry of ips) {
    const raw = (entry as { address?: unknown } | null)?.address;
    // Tolerate `10.0.0.5/24`: the prefix belongs in prefixLength, but the address is still clear.
    const address = typeof raw === 'string' ? raw.split('/')[0]! : '';
    if (isIP(address) && !out.includes(address)) out.push(address);
  }
  return out;
}

export interface PodStatusInputs {
  /** The node's InternalIP: `hostIP`, and `podIP` for hostNetwork pods. */
  nodeIp: string;
  now: number;
  vifAnnotation: string;
  requireVif: boolean;
  /** The IPs a container runtime plugged the pod with (its CNI result); when absent, the VIF annotation's. */
  podIps?: readonly string[];
}

export interface DesiredPodStatus {
  status: PodStatus;
  /** When the status will change with no other change (a container due to exit). */
  recheckAfterMs?: number;
}

const condition = (type: string, ok: boolean, reason?: string, message?: string): PodCondition => ({
  type,
  status: ok ? 'True' : 'False',
  ...(reason ? { reason } : {}),
  ...(message ? { message } : {}),
  lastProbeTime: null,
});

/**
 * What the kubelet reports for a pod bound to its node, or undefined when it leaves the status alone (finished, or
 * being deleted). Waiting for the VIF → Pending/ContainerCreating; else Running and Ready with the VIF's IPs (a pod's
 * IPs never change once set, as on a real node); a `restartPolicy: Never` pod with {@link exitAfterAnnotation} →
 * Succeeded once that has passed. Timestamps already reported are kept, so an unchanged pod compares equal.
 */
export function desiredPodStatus(pod: DeepReadonly<Pod>, inputs: PodStatusInputs): DesiredPodStatus | undefined {
  const current = pod.status ?? {};
  if (current.phase === 'Succeeded' || current.phase === 'Failed' || pod.metadata.deletionTimestamp) return undefined;
  const now = rfc3339(inputs.now);
  const hostNetwork = pod.spec?.hostNetwork === true;
  const ips = hostNetwork
    ? [inputs.nodeIp]
    : current.podIPs?.length
      ? current.podIPs.map((p) => p.ip)
      : (inputs.podIps ?? vifIps(pod.metadata.annotations?.[inputs.vifAnnotation]));
  const waiting = !hostNetwork && inputs.requireVif && ips.length === 0;
  const containers = pod.spec?.containers ?? [];
  const oldStatuses = new Map((current.containerStatuses ?? []).map((c) => [c.name, c]));
  /** When a container was last reported running, if it was. */
  const runningSince = (name: string): string | undefined => {
    const state = oldStatuses.get(name)?.state;
    return state && 'running' in state ? state.running.startedAt : undefined;
  };
  const startedAt = (name: string): string => runningSince(name) ?? now;

  let phase: PodPhase = waiting ? 'Pending' : 'Running';
  let recheckAfterMs: number | undefined;
  const exitAfter = Number(pod.metadata.annotations?.[exitAfterAnnotation]);
  if (!waiting && pod.spec?.restartPolicy === 'Never' && Number.isFinite(exitAfter) && exitAfter >= 0) {
    // Exit only once the pod has been reported Running, so watchers see it run first (a port made, then deleted).
    const starts = containers.map((c) => runningSince(c.name));
    const since =
      starts.length > 0 && starts.every((t) => t !== undefined)
        ? Math.max(...starts.map((t) => Date.parse(t)))
        : undefined;
    if (since !== undefined && inputs.now >= since + exitAfter) phase = 'Succeeded';
    else recheckAfterMs = since === undefined ? exitAfter : since + exitAfter - inputs.now;
  }

  const unready = containers.map((c) => c.name).join(' ');
  const conditions =
    phase === 'Running'
      ? [
          condition('Initialized', true),
          condition('Ready', true),
          condition('ContainersReady', true),
          condition('PodScheduled', true),
        ]
      : phase === 'Pending'
        ? [
            condition('Initialized', true),
            condition('Ready', false, 'ContainersNotReady', `containers with unready status: [${unready}]`),
            condition('ContainersReady', false, 'ContainersNotReady', `containers with unready status: [${unready}]`),
            condition('PodScheduled', true),
          ]
        : [
            condition('Initialized', true, 'PodCompleted'),
            condition('Ready', false, 'PodCompleted'),
            condition('ContainersReady', false, 'PodCompleted'),
            condition('PodScheduled', true),
          ];
  for (const c of conditions) {
    const old = current.conditions?.find((o) => o.type === c.type);
    c.lastTransitionTime = old?.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : now;
  }
  const ours = new Set(conditions.map((c) => c.type));
  const others = (current.conditions ?? []).filter((c) => !ours.has(c.type)) as PodCondition[];

  const containerStatuses: ContainerStatus[] = containers.map((c) => {
    const image = c.image ?? '';
    const base = { name: c.name, image, imageID: `raven-sim://${image}`, restartCount: 0 };
    if (phase === 'Pending')
      return { ...base, ready: false, started: false, state: { waiting: { reason: 'ContainerCreating' } } };
    const containerID = `raven-sim://${pod.metadata.uid ?? ''}/${c.name}`;
    if (phase === 'Running')
      return { ...base, containerID, ready: true, started: true, state: { running: { startedAt: startedAt(c.name) } } };
    const old = oldStatuses.get(c.name)?.state;
    const done =
      old && 'terminated' in old
        ? old.terminated
        : { exitCode: 0, reason: 'Completed', startedAt: startedAt(c.name), finishedAt: now };
    return { ...base, containerID, ready: false, started: false, state: { terminated: { ...done } } };
  });

  const status: PodStatus = {
    ...(structuredClone(current) as PodStatus),
    phase,
    conditions: [...conditions, ...structuredClone(others)],
    hostIP: inputs.nodeIp,
    hostIPs: [{ ip: inputs.nodeIp }],
    startTime: current.startTime ?? now,
    containerStatuses,
  };
  if (ips.length > 0) {
    status.podIP = ips[0]!;
    status.podIPs = ips.map((ip) => ({ ip }));
  }
  return { status, ...(recheckAfterMs !== undefined ? { recheckAfterMs: Math.max(1, recheckAfterMs) } : {}) };
}
