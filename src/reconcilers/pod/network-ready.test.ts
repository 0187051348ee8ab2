import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import type { Pod, PodCondition } from '../../kube/api/index.ts';
import { networkReadySeconds, scheduledAt } from './network-ready.ts';

const pod = (creationTimestamp: string | undefined, conditions?: PodCondition[]): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', ...(creationTimestamp ? { creationTimestamp } : {}) },
  ...(conditions ? { status: { conditions } } : {}),
});

describe('network-ready latency', () => {
  it('counts from the binding (PodScheduled=True), else from the creation', () => {
    const bound = pod('2026-11-22T10:00:00Z', [
      { type: 'Ready', status: 'False', lastTransitionTime: '2026-11-22T10:00:09Z' },
      { type: 'PodScheduled', status: 'True', lastTransitionTime: '2026-11-22T10:00:05Z' },
    ]);
    assert.equal(scheduledAt(bound), Date.parse('2026-11-22T10:00:05Z'));
    assert.equal(networkReadySeconds(bound, Date.parse('2026-11-22T10:00:06.250Z')), 1.25);
    // Created with nodeName set (never bound), or unschedulable at first: the creation time.
    assert.equal(scheduledAt(pod('2026-11-22T10:00:00Z')), Date.parse('2026-11-22T10:00:00Z'));
    assert.equal(
      scheduledAt(
        pod('2026-11-22T10:00:00Z', [
          { type: 'PodScheduled', status: 'False', lastTransitionTime: '2026-11-22T10:00:03Z' },
        ]),
      ),
      Date.parse('2026-11-22T10:00:00Z'),
    );
  });

  it('is never negative (clock skew) and unknown without any time', () => {
    assert.equal(networkReadySeconds(pod('2026-11-22T10:00:10Z'), Date.parse('2026-11-22T10:00:09Z')), 0);
    assert.equal(networkReadySeconds(pod(undefined), Date.now()), undefined);
    assert.equal(networkReadySeconds(pod('not a time'), Date.now()), undefined);
  });
});
