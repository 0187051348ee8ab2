import { clusterTag, namePrefix } from '../../../src/reconcilers/index.ts';
import type { RavenConfig } from '../../../src/daemon/config/index.ts';

/**
 * What `raven dev` says, loudly and before it touches anything, when it runs against a real cloud rather than the
 * simulator: which cloud, what it will create there (from the configuration), and whether it deletes that on exit.
 *
 * @example
 * process.stderr.write(realCloudNotice({ name: 'prod', source: '~/.config/openstack/clouds.yaml' }, config, true));
 */
export function realCloudNotice(
  cloud: { name: string; source: string },
  config: RavenConfig,
  cleanup: boolean,
): string {
  const { clusterId, subnets, serviceSubnet, translations } = config;
  const made = [
    config.router.id === undefined ? 'a router' : `interfaces on router ${config.router.id}`,
    subnets.strategy === 'namespace'
      ? 'a network and subnet per namespace'
      : subnets.shared.cidr !== undefined
        ? `a pod network and subnet (${subnets.shared.cidr})`
        : undefined,
    translations.pods ? 'a port per pod' : undefined,
    translations.services && serviceSubnet.cidr !== undefined
      ? `a service network and subnet (${serviceSubnet.cidr})`
      : undefined,
    translations.services
      ? `a load balancer${config.floatingIpNetworkId !== undefined ? ' and a floating IP' : ''} per LoadBalancer Service`
      : undefined,
  ].filter((m): m is string => m !== undefined);
  const teardown = `raven gc --teardown --yes --cluster-id ${clusterId}`;
  return [
    `!! raven dev is using a REAL cloud: ${cloud.name} (${cloud.source}), not the simulator.`,
    `!! It creates there, tagged ${clusterTag(clusterId)} and named ${namePrefix(clusterId)}…: ${made.join(', ')}.`,
    cleanup
      ? `!! On exit it deletes everything tagged ${clusterTag(clusterId)} there (as \`${teardown}\`); --no-cleanup keeps it.`
      : `!! --no-cleanup: on exit it leaves all of it there; \`${teardown}\` deletes it.`,
    '',
  ].join('\n');
}
