import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { deepFreeze } from '../../../src/core/index.ts';
import { desiredPodStatus, exitAfterAnnotation, vifIps, type PodStatusInputs } from './pod-status.ts';
import type { Pod } from '../../../src/kube/api/index.ts';

const vif = 'raven.openstack.org/vif';
const inputs: PodStatusInputs = {
  nodeIp: '127.0.1.2',
  now: Date.parse('2025-01-01T00:00:00Z'),
  vifAnnotation: vif,
  requireVif: true,
};
const annotation = (...addresses: string[]) =>
  JSON.stringify({ version: 1, ips: addresses.map((address) => ({ address, prefixLength: 24, gateway: '10.0.0.1' })) });

function pod(
  extra: {
    annotations?: Record<string, string>;
    hostNetwork?: boolean;
    restartPolicy?: string;
    status?: Pod['status'];
  } = {},
): Pod {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'web',
      namespace: 'shop',
      uid: 'u-1',
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
    },
    spec: {
      nodeName: 'node-2',
      hostNetwork: extra.hostNetwork,
      restartPolicy: extra.restartPolicy ?? 'Always',
      containers: [
        { name: 'app', image: 'nginx:1' },
        { name: 'side', image: 'busybox' },
      ],
    },
    status: extra.status ?? { phase: 'Pending', qosClass: 'BestEffort' },
  };
}

const conditionOf = (status: Pod['status'], type: string) => status?.conditions?.find((c) => c.type === type);

describe('vifIps', () => {
  it('reads ips[].address in order, without duplicates, tolerating a prefix', () => {
    assert.deepEqual(vifIps(annotation('10.0.0.5', '10.0.0.5', 'fd00::5')), ['10.0.0.5', 'fd00::5']);
    assert.deepEqual(vifIps(JSON.stringify({ ips: [{ address: '10.0.0.7/24' }] })), ['10.0.0.7']);
  });

  it('treats anything malformed as no VIF', () => {
    for (const bad of [
      undefined,
      '',
      '{',
      'null',
      '[]',
      '{"ips":{}}',
      '{"ips":[null,{"address":5},{"address":"nope"}]}',
    ])
      assert.deepEqual(vifIps(bad), [], String(bad));
  });
});

describe('desiredPodStatus', () => {
  it('waits for the VIF: Pending, ContainerCreating, not Ready, no podIP', () => {
    const { status } = desiredPodStatus(deepFreeze(pod()), inputs)!;
    assert.equal(status.phase, 'Pending');
    assert.equal(status.podIP, undefined);
    assert.equal(status.hostIP, '127.0.1.2');
    assert.equal(status.qosClass, 'BestEffort', 'fields it does not own are kept');
    assert.equal(conditionOf(status, 'Ready')?.status, 'False');
    assert.equal(conditionOf(status, 'Ready')?.reason, 'ContainersNotReady');
    assert.deepEqual(
      status.containerStatuses?.map((c) => c.state),
      [{ waiting: { reason: 'ContainerCreating' } }, { waiting: { reason: 'ContainerCreating' } }],
    );
  });

  it('runs with the VIF IPs, and is stable: the same pod gives the same status later', () => {
    const first = desiredPodStatus(deepFreeze(pod({ annotations: { [vif]: annotation('10.0.0.5') } })), inputs)!.status;
    assert.equal(first.phase, 'Running');
    assert.equal(first.podIP, '10.0.0.5');
    assert.deepEqual(first.podIPs, [{ ip: '10.0.0.5' }]);
    assert.ok(
      ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].every(
        (t) => conditionOf(first, t)?.status === 'True',
      ),
    );
    assert.ok(first.containerStatuses?.every((c) => c.ready && 'running' in c.state));
    const later = desiredPodStatus(deepFreeze(pod({ annotations: { [vif]: annotation('10.0.0.5') }, status: first })), {
      ...inputs,
      now: inputs.now + 60_000,
    })!.status;
    assert.deepEqual(later, first);
  });

  it('never changes a pod IP once reported', () => {
    const running = desiredPodStatus(
      deepFreeze(pod({ annotations: { [vif]: annotation('10.0.0.5') } })),
      inputs,
    )!.status;
    const again = desiredPodStatus(
      deepFreeze(pod({ annotations: { [vif]: annotation('10.0.0.9') }, status: running })),
      inputs,
    )!.status;
    assert.equal(again.podIP, '10.0.0.5');
  });

  it("runs hostNetwork pods at once on the node's IP, and others without a VIF when requireVif is off", () => {
    const host = desiredPodStatus(deepFreeze(pod({ hostNetwork: true })), inputs)!.status;
    assert.equal(host.phase, 'Running');
    assert.equal(host.podIP, '127.0.1.2');
    const noCni = desiredPodStatus(deepFreeze(pod()), { ...inputs, requireVif: false })!.status;
    assert.equal(noCni.phase, 'Running');
    assert.equal(noCni.podIP, undefined);
  });

  it('leaves finished and terminating pods alone', () => {
    assert.equal(desiredPodStatus(deepFreeze(pod({ status: { phase: 'Succeeded' } })), inputs), undefined);
    const terminating = pod();
    terminating.metadata.deletionTimestamp = '2025-01-01T00:00:30Z';
    assert.equal(desiredPodStatus(deepFreeze(terminating), inputs), undefined);
  });

  it('a restartPolicy Never pod with exit-after-ms runs first, then Succeeds once that has passed', () => {
    const annotations = { [vif]: annotation('10.0.0.5'), [exitAfterAnnotation]: '5000' };
    const first = desiredPodStatus(deepFreeze(pod({ annotations, restartPolicy: 'Never' })), inputs)!;
    assert.equal(first.status.phase, 'Running');
    assert.equal(first.recheckAfterMs, 5000);
    const early = desiredPodStatus(deepFreeze(pod({ annotations, restartPolicy: 'Never', status: first.status })), {
      ...inputs,
      now: inputs.now + 4000,
    })!;
    assert.equal(early.status.phase, 'Running');
    assert.equal(early.recheckAfterMs, 1000);
    const done = desiredPodStatus(deepFreeze(pod({ annotations, restartPolicy: 'Never', status: early.status })), {
      ...inputs,
      now: inputs.now + 5000,
    })!;
    assert.equal(done.status.phase, 'Succeeded');
    assert.equal(done.recheckAfterMs, undefined);
    assert.equal(conditionOf(done.status, 'Ready')?.reason, 'PodCompleted');
    assert.ok(
      done.status.containerStatuses?.every(
        (c) => 'terminated' in c.state && c.state.terminated.exitCode === 0 && !c.ready,
      ),
    );
    assert.equal(
      desiredPodStatus(deepFreeze(pod({ annotations, restartPolicy: 'Always', status: early.status })), {
        ...inputs,
        now: inputs.now + 9000,
      })!.status.phase,
      'Running',
      'only restartPolicy Never pods exit',
    );
  });
});
