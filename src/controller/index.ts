/**
 * controller: the controller runtime (client-go semantics): the work queue and its rate limiters, leader election on
 * a Lease, and the event recorder; workers, reconcilers and the manager to come. Imports core and kube/*.
 */
export * from './workqueue/index.ts';
export * from './leader/index.ts';
export * from './events/index.ts';
