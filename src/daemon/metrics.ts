import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { RavenError } from '../core/index.ts';
import {
  controllerMetricNames,
  workQueueMetricNames,
  type ControllerMetrics,
  type MetricsProvider,
  type ReconcileOutcome,
  type WorkQueueMetrics,
} from '../controller/index.ts';

export interface CreateMetricsOptions {
  /** Also export prom-client's process and Node.js runtime metrics (`process_*`, `nodejs_*`). Default true. */
  defaultMetrics?: boolean;
}

export interface Metrics {
  /** What `/metrics` serves. */
  registry: Registry;
  /** Hand this to every `Controller` (and any stand-alone queue) as `metrics`. */
  provider: MetricsProvider;
}

/** client-go's work-queue buckets (`ExponentialBuckets(10e-9, 10, 10)`): 10 ns to 10 s. Literals, so `le` prints clean. */
const workQueueBuckets = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

/** controller-runtime's `controller_runtime_reconcile_time_seconds` buckets. */
const reconcileBuckets = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0,
  4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** The `result` label values controller-runtime creates at 0 for each controller, so `rate()` has a series from the start. */
const reconcileResults = ['success', 'error', 'requeue', 'requeue_after'] as const;

type AnyMetric = Counter<string> | Gauge<string> | Histogram<string>;

/**
 * The registry's metric of this name if there is one, else a new one registered there: a second `createMetrics` on
 * the same registry (or a second controller) then shares the vector instead of failing "already registered".
 */
function shared<M extends AnyMetric>(registry: Registry, kind: abstract new (...args: never[]) => M, name: string, make: () => M): M {
  const existing = registry.getSingleMetric(name);
  if (existing === undefined) return make();
  if (!(existing instanceof kind)) throw new RavenError('METRIC_CONFLICT', `metric ${name} is already registered with another type`);
  return existing;
}

/** Series already zeroed per histogram: `zero()` resets a series, and a second queue or controller of one name must not. */
const zeroed = new WeakMap<Histogram<string>, Set<string>>();

function zeroOnce(histogram: Histogram<string>, labels: Record<string, string>): void {
  const key = JSON.stringify(labels);
  const done = zeroed.get(histogram) ?? new Set<string>();
  zeroed.set(histogram, done);
  if (done.has(key)) return;
  done.add(key);
  histogram.zero(labels);
}

const seconds = (ms: number): number => ms / 1000;

/**
 * Prometheus metrics for the controllers and their work queues, under client-go's and controller-runtime's names
 * ({@link workQueueMetricNames}, {@link controllerMetricNames}) so dashboards and alerts written for Go controllers
 * work unchanged. The callbacks take milliseconds; Prometheus gets seconds.
 *
 * @example
 * const { registry, provider } = createMetrics();
 * const controller = new Controller({ name: 'service', metrics: provider, ... });
 * await listenOps({ port: 8080, health, registry });
 */
export function createMetrics(registry: Registry = new Registry(), options: CreateMetricsOptions = {}): Metrics {
  const registers = [registry];
  const counter = (name: string, help: string, labelNames: string[]) =>
    shared(registry, Counter, name, () => new Counter({ name, help, labelNames, registers }));
  const gauge = (name: string, help: string, labelNames: string[]) =>
    shared(registry, Gauge, name, () => new Gauge({ name, help, labelNames, registers }));
  const histogram = (name: string, help: string, labelNames: string[], buckets: number[]) =>
    shared(registry, Histogram, name, () => new Histogram({ name, help, labelNames, buckets, registers }));

  // Help texts are client-go's (component-base/metrics/prometheus/workqueue) and controller-runtime's.
  const q = workQueueMetricNames;
  const queue = {
    depth: gauge(q.depth, 'Current depth of workqueue', ['name']),
    adds: counter(q.adds, 'Total number of adds handled by workqueue', ['name']),
    latency: histogram(q.latency, 'How long in seconds an item stays in workqueue before being requested.', ['name'], workQueueBuckets),
    workDuration: histogram(q.workDuration, 'How long in seconds processing an item from workqueue takes.', ['name'], workQueueBuckets),
    unfinishedWork: gauge(
      q.unfinishedWork,
      "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. " +
        'One can deduce the number of stuck threads by observing the rate at which this increases.',
      ['name'],
    ),
    longestRunning: gauge(q.longestRunning, 'How many seconds has the longest running processor for workqueue been running.', ['name']),
    retries: counter(q.retries, 'Total number of retries handled by workqueue', ['name']),
  };

  const c = controllerMetricNames;
  const ctrl = {
    total: counter(c.reconcileTotal, 'Total number of reconciliations per controller', ['controller', 'result']),
    errors: counter(c.reconcileErrors, 'Total number of reconciliation errors per controller', ['controller']),
    terminal: counter(c.terminalErrors, 'Total number of terminal reconciliation errors per controller', ['controller']),
    time: histogram(c.reconcileTime, 'Length of time per reconciliation per controller', ['controller'], reconcileBuckets),
    active: gauge(c.activeWorkers, 'Number of currently used workers per controller', ['controller']),
    max: gauge(c.maxConcurrentReconciles, 'Maximum number of concurrent reconciles per controller', ['controller']),
  };

  // prom-client registers its default collectors once per registry; a second call would throw "already registered".
  if (options.defaultMetrics !== false && registry.getSingleMetric('process_cpu_seconds_total') === undefined) {
    collectDefaultMetrics({ register: registry });
  }

  const provider: MetricsProvider = {
    workQueue(name: string): WorkQueueMetrics {
      const labels = { name };
      // client-go creates every series of a queue when the queue is made, so a scrape sees them at 0 before any add.
      // Adding 0 creates a missing series and leaves a live one (a second queue of this name) as it is.
      queue.depth.inc(labels, 0);
      queue.adds.inc(labels, 0);
      zeroOnce(queue.latency, labels);
      zeroOnce(queue.workDuration, labels);
      queue.unfinishedWork.inc(labels, 0);
      queue.longestRunning.inc(labels, 0);
      queue.retries.inc(labels, 0);
      return {
        depth: (n) => queue.depth.set(labels, n),
        adds: () => queue.adds.inc(labels),
        latency: (ms) => queue.latency.observe(labels, seconds(ms)),
        workDuration: (ms) => queue.workDuration.observe(labels, seconds(ms)),
        unfinishedWork: (ms) => queue.unfinishedWork.set(labels, seconds(ms)),
        longestRunning: (ms) => queue.longestRunning.set(labels, seconds(ms)),
        retries: () => queue.retries.inc(labels),
      };
    },
    controller(name: string): ControllerMetrics {
      const labels = { controller: name };
      // As controller-runtime's initMetrics: every series exists at 0 from the start.
      for (const result of reconcileResults) ctrl.total.inc({ ...labels, result }, 0);
      ctrl.errors.inc(labels, 0);
      ctrl.terminal.inc(labels, 0);
      zeroOnce(ctrl.time, labels);
      ctrl.active.inc(labels, 0);
      return {
        reconciled(outcome: ReconcileOutcome, ms: number) {
          // controller-runtime counts a terminal error as an error (result="error", errors_total) and also in
          // terminal_reconcile_errors_total; `terminal_error` is never a result label value there.
          const result = outcome === 'terminal_error' ? 'error' : outcome;
          ctrl.total.inc({ ...labels, result });
          if (result === 'error') ctrl.errors.inc(labels);
          if (outcome === 'terminal_error') ctrl.terminal.inc(labels);
          ctrl.time.observe(labels, seconds(ms));
        },
        activeWorkers: (n) => ctrl.active.set(labels, n),
        maxConcurrentReconciles: (n) => ctrl.max.set(labels, n),
      };
    },
  };
  return { registry, provider };
}
