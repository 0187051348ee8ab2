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
import type { RequestObserver } from '../openstack/index.ts';
import type { GcReport, Orphan, PoolSizeSample } from '../reconcilers/index.ts';

/** Raven's own metrics, as the callbacks the composition root hands to the reconcilers and the garbage collector. */
export interface RavenMetrics {
  /** A pod's VIF annotation was written `seconds` after the pod was scheduled (`networkReadySeconds`). */
  podNetworkReady(seconds: number): void;
  /** The garbage collector deleted an orphan (its OpenStack resource type and owner kind). */
  gcDeleted(orphan: Pick<Orphan, 'type' | 'ownerKind'>): void;
  /** A garbage-collection round ended: with its report, or failed (`report` absent). */
  gcRun(report: GcReport | undefined): void;
  /** A pool refill's bulk create took `seconds`. */
  poolRefilled(seconds: number): void;
  /** `raven_port_pool_size{node,namespace,groups}` and `raven_port_pool_{hits,misses}_total`, read at each scrape. */
  pools(read: () => { sizes: PoolSizeSample[]; hits: number; misses: number }): void;
  /** `raven_security_groups` and `raven_security_group_rules`: Raven's record of its groups, read at each scrape. */
  securityGroups(read: () => { groups: number; rules: number }): void;
  /** A pod port's security groups were changed (one port update). */
  membershipUpdated(): void;
  /** A NetworkPolicy's generation was in Neutron, groups, rules and memberships, `seconds` after Raven saw it. */
  policyTranslated(seconds: number): void;
  /**
   * Read at each scrape: `raven_pods_waiting{reason}` the pod controller's waiting keys,
   * `raven_loadbalancers_pending{state}` the service controller's `PENDING_*` ones, `raven_record_loading{record}`
   * whether each of Raven's records of its Neutron objects still waits on its first full list (1) or holds one (0).
   */
  waiting(source: {
    pods?: () => Map<string, number> | undefined;
    services?: () => Map<string, number> | undefined;
    records?: () => Map<string, number> | undefined;
  }): void;
}

export interface CreateMetricsOptions {
  /** Also export prom-client's process and Node.js runtime metrics (`process_*`, `nodejs_*`). Default true. */
  defaultMetrics?: boolean;
}

export interface Metrics {
  /** What `/metrics` serves. */
  registry: Registry;
  /** Hand this to every `Controller` (and any stand-alone queue) as `metrics`. */
  provider: MetricsProvider;
  /**
   * Hand this to `OpenStackSession.observe`: `raven_openstack_*`, per attempt, by service, method and route template.
   */
  openstack: RequestObserver;
  /** `raven_pod_network_ready_seconds`, `raven_gc_*`: the composition root wires them. */
  raven: RavenMetrics;
  /**
   * Exports client-go's `leader_election_master_status{name}` for the Lease `name`: 1 while `isLeader()` (read at each
   * scrape), 0 on a standby.
   */
  leaderElection(name: string, isLeader: () => boolean): void;
}

/**
 * client-go's work-queue buckets (`ExponentialBuckets(10e-9, 10, 10)`): 10 ns to 10 s. Literals, so `le` prints clean.
 */
const workQueueBuckets = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10];

/** controller-runtime's `controller_runtime_reconcile_time_seconds` buckets. */
const reconcileBuckets = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75,
  2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];

/** OpenStack round trips: 5 ms to a minute (a bulk port create on a loaded Neutron takes tens of seconds). */
const openStackBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** Scheduled → VIF annotation written: 10 ms to 2 minutes (Kubernetes timestamps have one-second resolution). */
const networkReadyBuckets = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 15, 30, 60, 120];

/** What the garbage collector deletes, by owner: every series exists at 0 from the start. */
const gcKinds = [
  ['port', 'pod'],
  ['port', 'service'],
  ['network', 'namespace'],
  ['loadbalancer', 'service'],
  ['floatingip', 'service'],
  ['securitygroup', 'securitygroup'],
] as const;

/**
 * The `result` label values controller-runtime creates at 0 for each controller, so `rate()` has a series from the
 * start.
 */
const reconcileResults = ['success', 'error', 'requeue', 'requeue_after'] as const;

type AnyMetric = Counter<string> | Gauge<string> | Histogram<string>;

/**
 * The registry's metric of this name if there is one, else a new one registered there: a second `createMetrics` on
 * the same registry (or a second controller) then shares the vector instead of failing "already registered".
 */
function shared<M extends AnyMetric>(
  registry: Registry,
  kind: abstract new (...args: never[]) => M,
  name: string,
  make: () => M,
): M {
  const existing = registry.getSingleMetric(name);
  if (existing === undefined) return make();
  if (!(existing instanceof kind))
    throw new RavenError('METRIC_CONFLICT', `metric ${name} is already registered with another type`);
  return existing;
}

/**
 * Series already zeroed per histogram: `zero()` resets a series, and a second queue or controller of one name must not.
 */
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
 * work unchanged; client-go's `leader_election_master_status`; and Raven's own under `raven_`: OpenStack requests
 * (`raven_openstack_requests_total`, `_request_duration_seconds`, `_errors_total`, `_retries_total`), pod network-ready
 * latency (`raven_pod_network_ready_seconds`) and garbage collection (`raven_gc_*`). The callbacks take
 * milliseconds; Prometheus gets seconds.
 *
 * @example
 * const metrics = createMetrics();
 * const controller = new Controller({ name: 'service', metrics: metrics.provider, ... });
 * session.observe(metrics.openstack);
 * await listenOps({ port: 8080, health, registry: metrics.registry });
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
    latency: histogram(
      q.latency,
      'How long in seconds an item stays in workqueue before being requested.',
      ['name'],
      workQueueBuckets,
    ),
    workDuration: histogram(
      q.workDuration,
      'How long in seconds processing an item from workqueue takes.',
      ['name'],
      workQueueBuckets,
    ),
    unfinishedWork: gauge(
      q.unfinishedWork,
      "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. " +
        'One can deduce the number of stuck threads by observing the rate at which this increases.',
      ['name'],
    ),
    longestRunning: gauge(
      q.longestRunning,
      'How many seconds has the longest running processor for workqueue been running.',
      ['name'],
    ),
    retries: counter(q.retries, 'Total number of retries handled by workqueue', ['name']),
  };

  const c = controllerMetricNames;
  const ctrl = {
    total: counter(c.reconcileTotal, 'Total number of reconciliations per controller', ['controller', 'result']),
    errors: counter(c.reconcileErrors, 'Total number of reconciliation errors per controller', ['controller']),
    terminal: counter(c.terminalErrors, 'Total number of terminal reconciliation errors per controller', [
      'controller',
    ]),
    time: histogram(
      c.reconcileTime,
      'Length of time per reconciliation per controller',
      ['controller'],
      reconcileBuckets,
    ),
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
  return {
    registry,
    provider,
    openstack: openStackMetrics(histogram, counter),
    raven: ravenMetrics(registry, histogram, counter, gauge),
    leaderElection: leaderElection(registry),
  };
}

type Make<M> = (name: string, help: string, labelNames: string[], buckets: number[]) => M;
type MakeCounter = (name: string, help: string, labelNames: string[]) => Counter<string>;
type MakeGauge = (name: string, help: string, labelNames: string[]) => Gauge<string>;

/**
 * `raven_openstack_*` from the session's per-attempt samples. `code` is the HTTP status, or why no response came
 * (`unreachable`, `timeout`, `aborted`); an error is a status ≥ 400 or no response; `type` is Neutron's error type.
 */
function openStackMetrics(histogram: Make<Histogram<string>>, counter: MakeCounter): RequestObserver {
  const route = ['service', 'method', 'operation'];
  const requests = counter(
    'raven_openstack_requests_total',
    'OpenStack HTTP requests (every attempt), by service, method, route template and status code.',
    [...route, 'code'],
  );
  const duration = histogram(
    'raven_openstack_request_duration_seconds',
    'OpenStack HTTP request latency in seconds (every attempt), by service, method and route template.',
    route,
    openStackBuckets,
  );
  const errors = counter(
    'raven_openstack_errors_total',
    'OpenStack HTTP requests that failed (status >= 400 or no response), by service, method, route template, code and service error type.',
    [...route, 'code', 'type'],
  );
  const retries = counter(
    'raven_openstack_retries_total',
    'OpenStack HTTP requests sent again by the retry policy (429, 5xx, connection failures), by service, method and route template.',
    route,
  );
  return (s) => {
    const labels = { service: s.service, method: s.method, operation: s.operation };
    const code = s.status === 0 ? (s.failure ?? 'error') : String(s.status);
    requests.inc({ ...labels, code });
    duration.observe(labels, s.durationMs / 1000);
    if (s.status === 0 || s.status >= 400) errors.inc({ ...labels, code, type: s.errorType ?? '' });
    if (s.attempt > 1) retries.inc(labels);
  };
}

/** The pools' state per registry, read by their metrics' collect at each scrape. */
const poolSources = new WeakMap<
  Registry,
  { read: (() => { sizes: PoolSizeSample[]; hits: number; misses: number }) | undefined }
>();

/** Raven's record of its security groups per registry, read by the gauges' collect at each scrape. */
const groupSources = new WeakMap<Registry, { read?: () => { groups: number; rules: number } }>();

/** The controllers' waiting counts per registry, read by the gauges' collect at each scrape. */
const waitingSources = new WeakMap<Registry, WaitingSources>();

type WaitingSources = Parameters<RavenMetrics['waiting']>[0];

/**
 * `raven_pod_network_ready_seconds`, `raven_gc_*`, `raven_pods_waiting`, `raven_loadbalancers_pending`,
 * `raven_record_loading`, the pools' and the security groups'.
 */
function ravenMetrics(
  registry: Registry,
  histogram: Make<Histogram<string>>,
  counter: MakeCounter,
  gauge: MakeGauge,
): RavenMetrics {
  const ready = histogram(
    'raven_pod_network_ready_seconds',
    "Seconds from a pod's scheduling (PodScheduled, else its creation) to Raven writing its VIF annotation.",
    [],
    networkReadyBuckets,
  );
  const deleted = counter(
    'raven_gc_deleted_total',
    'OpenStack resources the garbage collector deleted because their owner is gone, by resource type and owner kind.',
    ['resource', 'owner_kind'],
  );
  const runs = counter('raven_gc_runs_total', 'Garbage-collection rounds, by result (success, error).', ['result']);
  const lastSuccess = gauge(
    'raven_gc_last_success_timestamp_seconds',
    'When the last garbage-collection round succeeded, in seconds since the epoch.',
    [],
  );
  const blocked = gauge(
    'raven_gc_blocked',
    'Orphans the last garbage-collection round could not delete because a port Raven does not own holds them (each is named in a log line per round), by resource type.',
    ['resource'],
  );
  const untagged = gauge(
    'raven_gc_untagged_ports',
    "Pod ports named like this cluster's that carry none of its tags (never touched; a crash between create and tagging leaves one), as the last round saw.",
    [],
  );
  for (const [resource, owner] of gcKinds) deleted.inc({ resource, owner_kind: owner }, 0);
  for (const result of ['success', 'error']) runs.inc({ result }, 0);
  blocked.set({ resource: 'network' }, 0);
  untagged.set(0);
  const sources = waitingSources.get(registry) ?? {};
  waitingSources.set(registry, sources);
  const waitingGauge = (name: string, help: string, label: string, read: () => Map<string, number> | undefined) =>
    shared(
      registry,
      Gauge,
      name,
      () =>
        new Gauge({
          name,
          help,
          labelNames: [label],
          registers: [registry],
          collect() {
            // Reasons come and go: only the current ones are exported.
            this.reset();
            for (const [value, count] of read() ?? []) this.set({ [label]: value }, count);
          },
        }),
    );
  waitingGauge(
    'raven_pods_waiting',
    'Pods that want a port and wait, by reason (QuotaExceeded, SubnetExhausted, NoSubnet, NetworkMissing …).',
    'reason',
    () => sources.pods?.(),
  );
  waitingGauge(
    'raven_loadbalancers_pending',
    "Services whose Octavia load balancer Raven waits on, by the load balancer's provisioning status (PENDING_*).",
    'state',
    () => new Map([...(sources.services?.() ?? [])].filter(([state]) => state.startsWith('PENDING_'))),
  );
  waitingGauge(
    'raven_record_loading',
    "1 while a record of Raven's Neutron objects (pod-ports, security-groups) waits on its first full list, taken once it leads (its pods wait with it), then 0.",
    'record',
    () => sources.records?.(),
  );
  const refill = histogram(
    'raven_port_pool_refill_duration_seconds',
    'Seconds a port pool refill (one bulk create, with its tagging) took.',
    [],
    openStackBuckets,
  );
  const poolState = poolSources.get(registry) ?? { read: undefined };
  poolSources.set(registry, poolState);
  const read = () => poolState.read?.();
  const collected = <M extends Gauge<string> | Counter<string>>(
    kind: new (config: never) => M,
    name: string,
    help: string,
    labelNames: string[],
    collect: (m: M) => void,
  ) =>
    shared(
      registry,
      kind as never,
      name,
      () =>
        new (kind as unknown as new (c: object) => M)({
          name,
          help,
          labelNames,
          registers: [registry],
          collect(this: M) {
            collect(this);
          },
        }),
    );
  collected(
    Gauge,
    'raven_port_pool_size',
    'Free ports in each warm port pool, by node, namespace (`shared`: the shared subnet) and security groups (names).',
    ['node', 'namespace', 'groups'],
    (g) => {
      g.reset();
      for (const { node, namespace, groups, free } of read()?.sizes ?? []) g.set({ node, namespace, groups }, free);
    },
  );
  collected(Counter, 'raven_port_pool_hits_total', 'Pods given a port from a warm pool.', [], (c) => {
    c.reset();
    c.inc(read()?.hits ?? 0);
  });
  collected(
    Counter,
    'raven_port_pool_misses_total',
    'Pods whose warm pool was empty (they got a new port).',
    [],
    (c) => {
      c.reset();
      c.inc(read()?.misses ?? 0);
    },
  );
  const groupState = groupSources.get(registry) ?? {};
  groupSources.set(registry, groupState);
  collected(Gauge, 'raven_security_groups', "Raven's security groups (the NetworkPolicy translation).", [], (g) =>
    g.set(groupState.read?.().groups ?? 0),
  );
  collected(Gauge, 'raven_security_group_rules', "Rules in Raven's security groups.", [], (g) =>
    g.set(groupState.read?.().rules ?? 0),
  );
  const memberships = counter(
    'raven_security_group_membership_updates_total',
    'Pod ports whose security groups Raven changed (one port update each: a policy, label or namespace change).',
    [],
  );
  const translated = histogram(
    'raven_network_policy_sync_seconds',
    "Seconds from Raven seeing a NetworkPolicy's generation to Neutron holding all of it (groups, rules, every pod port's groups): the last Neutron call it caused.",
    [],
    networkReadyBuckets,
  );
  return {
    securityGroups: (source) => void (groupState.read = source),
    membershipUpdated: () => memberships.inc(),
    policyTranslated: (seconds) => translated.observe(seconds),
    podNetworkReady: (seconds) => ready.observe(seconds),
    poolRefilled: (seconds) => refill.observe(seconds),
    pools: (source) => void (poolState.read = source),
    gcDeleted: (orphan) => deleted.inc({ resource: orphan.type, owner_kind: orphan.ownerKind }),
    gcRun: (report) => {
      runs.inc({ result: report ? 'success' : 'error' });
      if (!report) return;
      lastSuccess.setToCurrentTime();
      blocked.set({ resource: 'network' }, report.blocked.length);
      untagged.set(report.untagged.length);
    },
    waiting: (source) => Object.assign(sources, source),
  };
}

/** Leaders per registry, read by the gauge's collect at each scrape (a second `createMetrics` shares the gauge). */
const leaders = new WeakMap<Registry, Map<string, () => boolean>>();

function leaderElection(registry: Registry): (name: string, isLeader: () => boolean) => void {
  const sources = leaders.get(registry) ?? new Map<string, () => boolean>();
  leaders.set(registry, sources);
  shared(
    registry,
    Gauge,
    'leader_election_master_status',
    () =>
      new Gauge({
        name: 'leader_election_master_status',
        // client-go's help text (tools/leaderelection/metrics.go).
        help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
        labelNames: ['name'],
        registers: [registry],
        collect() {
          for (const [name, isLeader] of sources) this.set({ name }, isLeader() ? 1 : 0);
        },
      }),
  );
  return (name, isLeader) => {
    sources.set(name, isLeader);
  };
}
