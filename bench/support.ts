/**
 * Shared pieces of the benchmarks: a bounded request pool, percentiles, number formatting, the result row type, and
 * the objects the benchmarks write (a ConfigMap, and a Pod shaped like one kubectl and a kubelet would leave behind).
 */
import { performance } from 'node:perf_hooks';

/** One line of the printed table. */
export interface Row {
  benchmark: string;
  condition: string;
  result: string;
}

/** What a bounded run of operations achieved. */
export interface PoolResult {
  /** Operations that finished (successfully) before the deadline. */
  done: number;
  elapsedMs: number;
  /** Per-operation latency in ms, in completion order. */
  latencies: number[];
  /** True when the deadline stopped the run before `count` operations were issued. */
  capped: boolean;
}

/**
 * Runs `op(0)` … `op(count - 1)` with `concurrency` in flight; stops issuing new ones once `deadlineMs` has passed, so
 * every measurement is bounded in time whatever the server's speed. An operation that throws fails the run.
 */
export async function runPool(
  count: number,
  concurrency: number,
  deadlineMs: number,
  op: (i: number) => Promise<void>,
): Promise<PoolResult> {
  const latencies: number[] = [];
  const start = performance.now();
  const stopAt = start + deadlineMs;
  let next = 0;
  let capped = false;
  const worker = async (): Promise<void> => {
    for (;;) {
      if (next >= count) return;
      if (performance.now() >= stopAt) {
        capped = true;
        return;
      }
      const i = next++;
      const t0 = performance.now();
      await op(i);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  return { done: latencies.length, elapsedMs: performance.now() - start, latencies, capped };
}

/** Nearest-rank percentile (`p` in 0–100) of unsorted values; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** `12,345`. */
export function fmtInt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** Milliseconds with two significant decimals below 10 ms, one below 100, none above. */
export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return 'n/a';
  return `${ms < 10 ? ms.toFixed(2) : ms < 100 ? ms.toFixed(1) : ms.toFixed(0)} ms`;
}

export function fmtBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  if (n >= 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${Math.round(n)} B`;
}

/** `1,234/s, p50 1.20 ms, p99 8.5 ms` for a pool run, with a note when the time cap cut it short. */
export function fmtRate(r: PoolResult, unit: string): string {
  const rate = (r.done / r.elapsedMs) * 1000;
  const cap = r.capped ? ` (time cap hit after ${fmtInt(r.done)} ops)` : '';
  return `${fmtInt(rate)} ${unit}/s, p50 ${fmtMs(percentile(r.latencies, 50))}, p99 ${fmtMs(percentile(r.latencies, 99))}${cap}`;
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A ConfigMap of a few hundred bytes, the size of a typical small configuration. */
export function benchConfigMap(name: string, generation = 0, resourceVersion?: string): object {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, labels: { app: 'bench', tier: 'config' }, ...(resourceVersion ? { resourceVersion } : {}) },
    data: {
      'settings.yaml': `replicas: 3\nlogLevel: info\ngeneration: ${generation}\nendpoint: http://backend.bench.svc:8080/api\n`,
      'feature-flags': 'alpha=false,beta=true,gamma=false',
      owner: 'team-bench',
    },
  };
}

/** A Pod as `kubectl create deployment` + a ReplicaSet would submit it: labels, owner, one container. */
export function benchPod(name: string): object {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      labels: { app: 'web', 'pod-template-hash': '7d9c6b8f5d', tier: 'frontend' },
      annotations: { 'kubectl.kubernetes.io/restartedAt': '2024-05-01T10:00:00Z' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web-7d9c6b8f5d',
          uid: '0b6f3c1e-8a2d-4b7e-9f10-2c3d4e5f6a7b',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      containers: [
        {
          name: 'web',
          image: 'nginx:1.25.4',
          ports: [{ name: 'http', containerPort: 80 }],
          env: [{ name: 'LOG_LEVEL', value: 'info' }],
          resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
          volumeMounts: [
            {
              name: 'kube-api-access-x7k2p',
              mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
              readOnly: true,
            },
          ],
        },
      ],
      volumes: [
        {
          name: 'kube-api-access-x7k2p',
          projected: {
            defaultMode: 420,
            sources: [{ serviceAccountToken: { expirationSeconds: 3607, path: 'token' } }],
          },
        },
      ],
      nodeName: 'node-1',
      tolerations: [
        { key: 'node.kubernetes.io/not-ready', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
        { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 },
      ],
    },
  };
}

/**
 * The status a kubelet writes once the pod runs (`PUT …/pods/<name>/status`): conditions, IPs, one container status.
 */
export function runningStatus(index: number): object {
  const t = '2024-05-01T10:00:05Z';
  const ip = `10.244.${(index >> 8) & 255}.${index & 255}`;
  return {
    phase: 'Running',
    conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
      type,
      status: 'True',
      lastProbeTime: null,
      lastTransitionTime: t,
    })),
    hostIP: '192.168.10.11',
    podIP: ip,
    podIPs: [{ ip }],
    startTime: t,
    qosClass: 'Burstable',
    containerStatuses: [
      {
        name: 'web',
        state: { running: { startedAt: t } },
        lastState: {},
        ready: true,
        restartCount: 0,
        image: 'docker.io/library/nginx:1.25.4',
        imageID: 'docker.io/library/nginx@sha256:9784f7985f6fba493ba30fb68419f50484fee8faaf677216cb95826f8491d2e9',
        containerID: `containerd://${index.toString(16).padStart(64, '0')}`,
        started: true,
      },
    ],
  };
}

/** heapUsed after three forced GCs (needs `node --expose-gc`, which `npm run bench` passes). */
export function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc (npm run bench does)');
  for (let i = 0; i < 3; i++) gc();
  return process.memoryUsage().heapUsed;
}

/** Wall-clock ms with sub-ms resolution: comparable across the benchmark's processes (one machine, one clock). */
export function epochMs(): number {
  return performance.timeOrigin + performance.now();
}
