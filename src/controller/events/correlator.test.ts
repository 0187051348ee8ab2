import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { FakeClock } from '../../core/index.ts';
import { EventCorrelator, messageOf, type Correlation } from './correlator.ts';

const pod = { kind: 'Pod', name: 'p', namespace: 'ns', uid: 'u1' };
let n = 0;
const name = () => `p.${n++}`;

/** The action and, unless skipped, the Event's name, count and message. */
function seen(c: Correlation) {
  return c.action === 'skip'
    ? { action: c.action }
    : { action: c.action, name: c.event.name, count: c.event.count, message: messageOf(c.event) };
}

describe('EventCorrelator', () => {
  it('repeats fold into one Event with a growing count; another object, type or reason starts another', () => {
    const clock = new FakeClock(1000);
    const c = new EventCorrelator({ clock, source: 's' });
    const first = seen(c.correlate(pod, 'Normal', 'Synced', 'ok', name));
    assert.equal(first.action, 'new');
    clock.advance(5000);
    const second = c.correlate(pod, 'Normal', 'Synced', 'ok', name);
    assert.equal(second.action, 'fold');
    assert.deepEqual(
      second.action === 'fold' && [second.event.count, second.event.first, second.event.last],
      [2, 1000, 6000],
    );
    assert.equal(second.action === 'fold' && second.event.name, first.name);
    assert.equal(c.correlate(pod, 'Normal', 'Other', 'ok', name).action, 'new');
    assert.equal(c.correlate(pod, 'Warning', 'Synced', 'ok', name).action, 'new');
    assert.equal(c.correlate({ ...pod, uid: 'u2' }, 'Normal', 'Synced', 'ok', name).action, 'new');
  });

  it('another message folds in (the latest, marked combined) until the Event is a minute old, then starts one', () => {
    const clock = new FakeClock(0);
    const c = new EventCorrelator({ clock, source: 's' });
    const first = seen(c.correlate(pod, 'Warning', 'ReconcileError', 'connection refused', name));
    clock.advance(59_999);
    assert.deepEqual(seen(c.correlate(pod, 'Warning', 'ReconcileError', '503 from Neutron', name)), {
      action: 'fold',
      name: first.name,
      count: 2,
      message: '(combined from similar events): 503 from Neutron',
    });
    clock.advance(1);
    const next = seen(c.correlate(pod, 'Warning', 'ReconcileError', 'timed out', name));
    assert.deepEqual(
      { ...next, name: next.name === first.name },
      {
        action: 'new',
        name: false,
        count: 1,
        message: 'timed out',
      },
    );
  });

  it('a message that differs at every try (5 min, one a second) makes one new Event a minute, and counts them all', () => {
    const clock = new FakeClock(0);
    const c = new EventCorrelator({ clock, source: 's' });
    const names = new Map<string, number>();
    for (let i = 0; i < 300; i++) {
      const r = c.correlate(pod, 'Warning', 'QuotaExceeded', `quota exceeded (attempt ${i})`, name);
      assert.notEqual(r.action, 'skip');
      if (r.action !== 'skip') names.set(r.event.name, r.event.count);
      clock.advance(1000);
    }
    assert.deepEqual([...names.values()], [60, 60, 60, 60, 60]);
  });

  it('a repeat after the window creates a new Event', () => {
    const clock = new FakeClock(0);
    const c = new EventCorrelator({ clock, source: 's', windowMs: 600_000 });
    c.correlate(pod, 'Normal', 'R', 'm', name);
    clock.advance(600_000);
    assert.equal(c.correlate(pod, 'Normal', 'R', 'm', name).action, 'fold');
    clock.advance(600_001);
    assert.equal(c.correlate(pod, 'Normal', 'R', 'm', name).action, 'new');
  });

  it('`once`: the same state is dropped, not counted; a changed state is an occurrence; the window re-reports', () => {
    const clock = new FakeClock(0);
    const c = new EventCorrelator({ clock, source: 's', windowMs: 600_000 });
    const once = { once: true };
    const first = seen(c.correlate(pod, 'Warning', 'Stuck', 'since t0', name, once));
    assert.equal(first.action, 'new');
    clock.advance(30_000);
    assert.deepEqual(seen(c.correlate(pod, 'Warning', 'Stuck', 'since t0', name, once)), { action: 'skip' });
    // Another state of the same reason is news: counted on the Event, which now says it.
    assert.deepEqual(seen(c.correlate(pod, 'Warning', 'Stuck', 'since t1', name, once)), {
      action: 'fold',
      name: first.name,
      count: 2,
      message: '(combined from similar events): since t1',
    });
    assert.equal(c.correlate(pod, 'Warning', 'Stuck', 'since t1', name, once).action, 'skip');
    // The dropped repeats did not move the window: 10 min after the last counted one it is reported again.
    clock.advance(600_001);
    assert.equal(c.correlate(pod, 'Warning', 'Stuck', 'since t1', name, once).action, 'new');
  });

  it('the spam filter allows a burst of 25 writes per object, then 1 per 300 s', () => {
    const clock = new FakeClock(0);
    const c = new EventCorrelator({ clock, source: 's' });
    const allowed = Array.from({ length: 30 }, () => c.allowWrite(pod));
    assert.equal(allowed.filter(Boolean).length, 25);
    assert.deepEqual(allowed.slice(25), [false, false, false, false, false]);
    // Another object has its own bucket.
    assert.equal(c.allowWrite({ ...pod, name: 'q' }), true);
    clock.advance(299_000);
    assert.equal(c.allowWrite(pod), false);
    clock.advance(1_000);
    assert.equal(c.allowWrite(pod), true);
  });
});
