import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../core/index.ts';
import { EventCorrelator } from './correlator.ts';

const pod = { kind: 'Pod', name: 'p', namespace: 'ns', uid: 'u1' };
let n = 0;
const name = () => `p.${n++}`;

describe('EventCorrelator', () => {
  it('identical events patch one Event with a growing count; any field that differs starts another', () => {
    const clock = new FakeClock(1000);
    const c = new EventCorrelator({ clock, source: 's' });
    const first = c.correlate(pod, 'Normal', 'Synced', 'ok', name);
    assert.equal(first.action, 'create');
    clock.advance(5000);
    const second = c.correlate(pod, 'Normal', 'Synced', 'ok', name);
    assert.deepEqual(second, {
      action: 'patch',
      name: first.action === 'create' ? first.name : '',
      count: 2,
      firstTimestamp: 1000,
      lastTimestamp: 6000,
    });
    assert.equal(c.correlate(pod, 'Normal', 'Other', 'ok', name).action, 'create');
    assert.equal(c.correlate(pod, 'Warning', 'Synced', 'ok', name).action, 'create');
    assert.equal(c.correlate(pod, 'Normal', 'Synced', 'different', name).action, 'create');
    assert.equal(c.correlate({ ...pod, uid: 'u2' }, 'Normal', 'Synced', 'ok', name).action, 'create');
  });

  it('a repeat after the window creates a new Event', () => {
    const clock = new FakeClock(0);
    const c = new EventCorrelator({ clock, source: 's', windowMs: 60_000 });
    c.correlate(pod, 'Normal', 'R', 'm', name);
    clock.advance(60_001);
    assert.equal(c.correlate(pod, 'Normal', 'R', 'm', name).action, 'create');
  });

  it('`once`: a state seen again within the window is dropped, not counted; reported again after it', () => {
    const clock = new FakeClock(0);
    const c = new EventCorrelator({ clock, source: 's', windowMs: 60_000 });
    const once = { once: true };
    assert.equal(c.correlate(pod, 'Warning', 'Stuck', 'since t0', name, once).action, 'create');
    clock.advance(30_000);
    assert.deepEqual(c.correlate(pod, 'Warning', 'Stuck', 'since t0', name, once), { action: 'skip' });
    // Another state of the same reason is news.
    assert.equal(c.correlate(pod, 'Warning', 'Stuck', 'since t1', name, once).action, 'create');
    // The dropped repeat did not move the window: 60 s after the first report it is reported again.
    clock.advance(30_001);
    assert.equal(c.correlate(pod, 'Warning', 'Stuck', 'since t0', name, once).action, 'create');
  });

  it('the spam filter allows a burst of 25 per object, then 1 per 300 s', () => {
    const clock = new FakeClock(0);
    const c = new EventCorrelator({ clock, source: 's' });
    const actions = Array.from({ length: 30 }, (_, i) => c.correlate(pod, 'Normal', `R${i}`, 'm', name).action);
    assert.equal(actions.filter((a) => a !== 'skip').length, 25);
    assert.deepEqual(actions.slice(25), ['skip', 'skip', 'skip', 'skip', 'skip']);
    // Another object has its own bucket.
    assert.equal(c.correlate({ ...pod, name: 'q' }, 'Normal', 'R', 'm', name).action, 'create');
    clock.advance(299_000);
    assert.equal(c.correlate(pod, 'Normal', 'late', 'm', name).action, 'skip');
    clock.advance(1_000);
    assert.equal(c.correlate(pod, 'Normal', 'later', 'm', name).action, 'create');
  });

  it('a dropped repeat still counts, so the next written one carries the true count', () => {
    const clock = new FakeClock(0);
    const c = new EventCorrelator({ clock, source: 's', spamBurst: 1, spamQps: 1 });
    assert.equal(c.correlate(pod, 'Normal', 'R', 'm', name).action, 'create');
    assert.equal(c.correlate(pod, 'Normal', 'R', 'm', name).action, 'skip');
    clock.advance(1000);
    const third = c.correlate(pod, 'Normal', 'R', 'm', name);
    assert.equal(third.action === 'patch' && third.count, 3);
  });
});
