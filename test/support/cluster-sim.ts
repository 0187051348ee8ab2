/** Test helpers shared by the simulator's tests (not part of the folder's API). */
import { SharedInformerFactory } from '../../src/kube/cache/index.ts';
import { KubeClient } from '../../src/kube/client/index.ts';
import { ClusterSimulator, type ClusterSimulatorOptions } from '@raven/cluster-sim/simulator.ts';
import { testConnection } from './server.ts';

export const vifAnnotation = 'raven.openstack.org/vif';

/** A VIF annotation value as Raven writes it, with one IP. */
export const vif = (address: string): string =>
  JSON.stringify({
    version: 1,
    portId: 'port-1',
    ips: [{ address, prefixLength: 24, gateway: '10.0.0.1' }],
    active: true,
  });

export interface RunningSimulator {
  client: KubeClient;
  sim: ClusterSimulator;
  /** Stops the simulator, waits for it, and closes the client. */
  stop(): Promise<void>;
}

/** A simulator running against a test API server, with its own client (high QPS) and informers. */
export function runSimulator(
  server: { url: string; caPem?: string | undefined; token: string },
  options: Partial<ClusterSimulatorOptions> = {},
): RunningSimulator {
  const connection = testConnection(server);
  const client = new KubeClient({ connection, qps: 5000, burst: 5000 });
  const sim = new ClusterSimulator({
    client,
    connection,
    informers: new SharedInformerFactory({ client }),
    ...options,
  });
  const stop = new AbortController();
  const running = sim.run(stop.signal);
  return {
    client,
    sim,
    async stop() {
      stop.abort();
      await running;
      await client.close();
    },
  };
}
