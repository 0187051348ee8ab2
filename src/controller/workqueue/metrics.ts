/**
 * Work-queue metrics as plain callbacks, so the queue carries no Prometheus dependency. The daemon wires these to
 * prom-client (or anything else) under the names in {@link workQueueMetricNames}, which are client-go's
 * `util/workqueue/metrics.go` names, so dashboards written for client-go controllers work unchanged.
 */
export interface WorkQueueMetrics {
  /** The queue's depth changed: keys waiting to be handed out, including keys parked behind a worker. */
  depth(n: number): void;
  /** A key was added that was not already waiting. */
  adds(): void;
  /** A key was handed to a worker after waiting `ms` in the queue. */
  latency(ms: number): void;
  /** A worker called `done` after holding a key for `ms`. */
  workDuration(ms: number): void;
  /** Sum of how long every in-flight key has been held (reported by `updateUnfinishedWork()`). */
  unfinishedWork(ms: number): void;
  /** How long the longest-held in-flight key has been held (reported by `updateUnfinishedWork()`). */
  longestRunning(ms: number): void;
  /** A delayed or rate-limited re-add (`addAfter`, and so `addRateLimited`). */
  retries(): void;
}

/** Prometheus names for {@link WorkQueueMetrics}, as client-go registers them (durations there are in seconds). */
export const workQueueMetricNames = {
  depth: 'workqueue_depth',
  adds: 'workqueue_adds_total',
  latency: 'workqueue_queue_duration_seconds',
  workDuration: 'workqueue_work_duration_seconds',
  unfinishedWork: 'workqueue_unfinished_work_seconds',
  longestRunning: 'workqueue_longest_running_processor_seconds',
  retries: 'workqueue_retries_total',
} as const satisfies Record<keyof WorkQueueMetrics, string>;

/** Metrics that record nothing: the default. */
export const noopMetrics: WorkQueueMetrics = {
  depth: () => {},
  adds: () => {},
  latency: () => {},
  workDuration: () => {},
  unfinishedWork: () => {},
  longestRunning: () => {},
  retries: () => {},
};

/** Fills the callbacks a caller left out with no-ops (calling the given ones with their own `this`). */
export function completeMetrics(m: Partial<WorkQueueMetrics> | undefined): WorkQueueMetrics {
  if (!m) return noopMetrics;
  return {
    depth: (n) => m.depth?.(n),
    adds: () => m.adds?.(),
    latency: (ms) => m.latency?.(ms),
    workDuration: (ms) => m.workDuration?.(ms),
    unfinishedWork: (ms) => m.unfinishedWork?.(ms),
    longestRunning: (ms) => m.longestRunning?.(ms),
    retries: () => m.retries?.(),
  };
}
