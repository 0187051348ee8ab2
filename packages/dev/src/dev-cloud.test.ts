import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { loadRavenConfig } from '../../../src/daemon/config/index.ts';
import { realCloudNotice } from './dev-cloud.ts';

const cloud = { name: 'prod', source: '/home/me/.config/openstack/clouds.yaml' };

describe('realCloudNotice', () => {
  it('names the cloud, what the configuration makes there, and that it goes on exit', () => {
    const config = loadRavenConfig({
      env: { RAVEN_CLUSTER_ID: 'dev', FLANNEL_NET: '10.244.0.0/16', RAVEN_SERVICE_SUBNET_CIDR: '10.96.0.0/12' },
    });
    assert.equal(
      realCloudNotice(cloud, config, true),
      [
        '!! raven dev is using a REAL cloud: prod (/home/me/.config/openstack/clouds.yaml), not the simulator.',
        '!! It creates there, tagged raven.cluster=dev and named raven/dev/…: a router, a network and subnet per ' +
          'namespace, a port per pod, a service network and subnet (10.96.0.0/12), a load balancer per LoadBalancer Service.',
        '!! On exit it deletes everything tagged raven.cluster=dev there (as `raven gc --teardown --yes --cluster-id dev`); ' +
          '--no-cleanup keeps it.',
        '',
      ].join('\n'),
    );
  });

  it('follows the configuration: an existing router and subnets, floating IPs; --no-cleanup says how to clean up', () => {
    const config = loadRavenConfig({
      env: {
        RAVEN_CLUSTER_ID: 'mine',
        RAVEN_SUBNET_STRATEGY: 'shared',
        RAVEN_POD_SUBNET_ID: '11111111-2222-4333-8444-555555555555',
        RAVEN_SERVICE_SUBNET_ID: '11111111-2222-4333-8444-666666666666',
        RAVEN_ROUTER_ID: '11111111-2222-4333-8444-777777777777',
        RAVEN_FLOATING_IP_NETWORK_ID: '11111111-2222-4333-8444-888888888888',
      },
    });
    const notice = realCloudNotice(cloud, config, false);
    assert.match(
      notice,
      /: interfaces on router 11111111-2222-4333-8444-777777777777, a port per pod, a load balancer and a floating IP per LoadBalancer Service\.\n/,
    );
    assert.match(
      notice,
      /!! --no-cleanup: on exit it leaves all of it there; `raven gc --teardown --yes --cluster-id mine` deletes it\.\n$/,
    );
  });
});
