import type { Clock, Logger } from '../../core/index.ts';
import type { BuilderOptions, EventRecorder, Manager } from '../../controller/index.ts';
import type { KubeClient } from '../../kube/client/index.ts';
import type { Cloud, ReconcilerConfig } from './types.ts';

/**
 * What every translation module's `setup` is handed (kubebuilder's `SetupWithManager`): the manager its controllers
 * and runnables join, the clients, the configuration and where Events, logs and time come from. What one module
 * takes from another (the cluster network, the subnet strategy, a pod's groups) is a second argument each module
 * declares for itself, so modules stay independent of each other and `reconcilers/modules.ts` wires them in order.
 */
export interface ModuleContext {
  manager: Manager;
  cloud: Cloud;
  client: KubeClient;
  config: ReconcilerConfig;
  recorder: EventRecorder;
  /** A controller's options with `workers` workers (metrics, resync, recorder, clock and logger are the manager's). */
  controllerOptions: (workers: number) => BuilderOptions;
  clock: Clock;
  logger: Logger;
}
