/**
 * controller: the controller runtime (client-go semantics): the work queue and its rate limiters today; workers,
 * reconcilers, the manager and leader election to come. Imports core and kube/*.
 */
export * from './workqueue/index.ts';
