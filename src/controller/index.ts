/**
 * controller: the controller runtime (client-go and controller-runtime semantics): the work queue and its rate
 * limiters, leader election on a Lease, the event recorder, and controllers, reconcilers and the manager.
 * Imports core and kube/*.
 */
export * from './workqueue/index.ts';
export * from './leader/index.ts';
export * from './events/index.ts';
export * from './runtime/index.ts';
