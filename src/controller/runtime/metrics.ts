import type { WorkQueueMetrics } from '../workqueue/index.ts';
import type { ReconcileOutcome } from './result.ts';

/**
 * A controller's metrics as plain callbacks; the daemon wires them to prom-client under {@link controllerMetricNames}.
 */
export interface ControllerMetrics {
  /** One reconcile finished with `outcome` after `ms`. */
  reconciled(outcome: ReconcileOutcome, ms: number): void;
  /** Workers currently inside a reconcile. */
  activeWorkers(n: number): void;
  /** The configured number of workers (set once at start). */
  maxConcurrentReconciles(n: number): void;
}

/**
 * controller-runtime's metric names (`pkg/internal/controller/metrics`), so dashboards written for it work unchanged.
 * Each is labelled `controller`; `reconcileTotal` also `result`; durations are in seconds there.
 */
export const controllerMetricNames = {
  reconcileTotal: 'controller_runtime_reconcile_total',
  reconcileErrors: 'controller_runtime_reconcile_errors_total',
  terminalErrors: 'controller_runtime_terminal_reconcile_errors_total',
  reconcileTime: 'controller_runtime_reconcile_time_seconds',
  activeWorkers: 'controller_runtime_active_workers',
  maxConcurrentReconciles: 'controller_runtime_max_concurrent_reconciles',
} as const;

/** Hands each controller its metric callbacks by name (the name becomes the `controller` / `name` label). */
export interface MetricsProvider {
  workQueue(name: string): Partial<WorkQueueMetrics>;
  controller(name: string): Partial<ControllerMetrics>;
}
