import assert from 'node:assert/strict';
import { describe, it } from '../../test/support/node-test.ts';
import { FakeClock } from '../core/index.ts';
import { TOPOLOGY_VERSION, type TopologySnapshot } from './shape.ts';
import { SnapshotHub } from './stream.ts';

function snapshotOf(clock: FakeClock, state: { stuck: number }): () => TopologySnapshot {
  return () => ({
    version: TOPOLOGY_VERSION,
    generatedAt: new Date(clock.now()).toISOString(),
    cluster: { clusterId: 'c', ready: true, podSubnets: [], serviceSubnets: [], subnetStrategy: 'shared' },
    namespaces: [],
    securityGroups: [],
    pools: [],
    stuck: state.stuck,
  });
}

const decode = (chunk: Uint8Array | undefined): TopologySnapshot =>
  JSON.parse(new TextDecoder().decode(chunk).replace(/^event: snapshot\ndata: /, '')) as TopologySnapshot;

describe('SnapshotHub', () => {
  it('holds at most the newest snapshot for a client that does not read: it skips to the fresh one', async () => {
    const clock = new FakeClock(0);
    const state = { stuck: 0 };
    const hub = new SnapshotHub({ snapshot: snapshotOf(clock, state), intervalMs: 100, clock });
    const reader = hub.open()!.getReader();
    for (let i = 1; i <= 50; i++) {
      state.stuck = i;
      clock.advance(100);
    }
    assert.equal(decode((await reader.read()).value).stuck, 50);
    state.stuck = 51;
    clock.advance(100);
    assert.equal(decode((await reader.read()).value).stuck, 51);
    hub.close();
    assert.equal((await reader.read()).done, true);
    assert.equal(hub.clients, 0);
  });

  it('builds no snapshot while nobody listens', () => {
    const clock = new FakeClock(0);
    let built = 0;
    const state = { stuck: 0 };
    const snapshot = snapshotOf(clock, state);
    const hub = new SnapshotHub({ snapshot: () => (built++, snapshot()), intervalMs: 100, clock });
    const stream = hub.open()!;
    clock.advance(300);
    const during = built;
    void stream.cancel();
    clock.advance(1_000);
    assert.equal(built, during);
    assert.ok(during >= 3);
  });
});
