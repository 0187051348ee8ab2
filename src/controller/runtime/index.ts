/**
 * controller/runtime: controller-runtime's model for Raven — reconcilers on keys, controllers that feed them from
 * shared informers, and a manager that starts and stops everything in order.
 *
 * Contract:
 * - A {@link Controller} queues the key of every changed object of its primary kind, and the keys its other
 *   {@link Source}s name: changes of other kinds through a map function (EndpointSlice → its Service), owned objects,
 *   and {@link EventChannel}s that carry events from outside the informers ("this pod's port is gone"). A
 *   {@link ControllerBuilder} (`newControllerManagedBy(manager).for(…).watches(…).complete(reconcile)`) wires one
 *   and adds it to the manager; once complete nothing about it changes. Informers replay their cache when a controller
 *   subscribes, so every object is reconciled once at start. A key is never reconciled by two workers at once.
 * - A reconcile's outcome decides what happens to its key: returned nothing → forget its failures; `requeueAfterMs` →
 *   forget, then look again after that long; `requeue` → again, rate-limited; threw → again, rate-limited (5 ms·2ⁿ up
 *   to 1000 s; at most 5 s when the cause is an outage, `isOutage`: the API or OpenStack unreachable or 5xx), logged,
 *   and a Warning Event on the object (`ReconcileError`, or a {@link RetryableError}'s reason); threw a
 *   {@link TerminalError} → logged, a Warning Event with its reason, and not retried until the object changes.
 * - Each reconcile gets a signal that aborts at `reconcileTimeoutMs` and on a hard stop; the key stays held until the
 *   reconcile actually returns, and one held past twice its timeout fails `healthz`.
 * - The {@link Manager} starts its servers first (already listening; see `addServer`), runs the informers from the
 *   start (a standby's caches are warm), waits for them to sync, then runs the runnables — leader-only ones while it
 *   holds the Lease. On stop: the runnables stop their sources and drain (in-flight and queued keys) within the
 *   deadline while the Lease is still renewed, then the Lease is released, the informers stop, Events are flushed,
 *   then the servers stop and the closers run. Losing the Lease aborts leader-only work at once and fails `start`
 *   with `LEADER_LOST`.
 * - Health is Kubernetes-style (`healthz`: ping + stuck reconciles; `readyz`: caches synced, every informer listed
 *   or watching within the last `informersUnreadyAfterMs`, not shutting down, and `leader-election`, which passes on
 *   a leader and a standby alike and notes which: `ok (leading)`, `ok (standby)`); the daemon serves it over HTTP. Metrics are callbacks named for Prometheus (controller-runtime's names).
 */
export { Controller, type ControllerOptions, type KeySpace, type StartOptions } from './controller.ts';
export { ControllerBuilder, newControllerManagedBy, allKeys, type BuilderOptions } from './builder.ts';
export {
  EventChannel,
  informerSource,
  ownerSource,
  primarySource,
  keysSource,
  type Source,
  type MapFunc,
} from './source.ts';
export { Manager, listeningServer, type ManagerOptions, type Runnable, type Closer } from './manager.ts';
export {
  HealthChecks,
  type HealthKind,
  type HealthCheck,
  type HealthCheckResult,
  type HealthNote,
  type HealthReport,
  type HealthRunOptions,
} from './health.ts';
export {
  TerminalError,
  RetryableError,
  terminalErrorOf,
  type Reconciler,
  type ReconcileResult,
  type ReconcileOutcome,
  type TerminalErrorOptions,
} from './result.ts';
export { controllerMetricNames, type ControllerMetrics, type MetricsProvider } from './metrics.ts';
