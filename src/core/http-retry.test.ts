import assert from 'node:assert/strict';
import { describe, it } from '../../test/support/node-test.ts';
import { FakeClock } from './clock.ts';
import {
  defaultRetry,
  isRetryableError,
  isRetryableStatus,
  parseRetryAfter,
  retryDelay,
  retrying,
  type AttemptOutcome,
  type AttemptReport,
  type RetryVerdict,
} from './http-retry.ts';

describe('retry rules', () => {
  it('retries idempotent methods on 429 and 5xx only', () => {
    for (const m of ['GET', 'HEAD', 'PUT', 'DELETE']) {
      assert.ok(isRetryableStatus(m, 429), m);
      assert.ok(isRetryableStatus(m, 503), m);
      assert.ok(isRetryableStatus(m, 500), m);
      assert.ok(!isRetryableStatus(m, 501), m);
      assert.ok(!isRetryableStatus(m, 404), m);
      assert.ok(!isRetryableStatus(m, 409), m);
    }
    for (const m of ['POST', 'PATCH']) {
      assert.ok(!isRetryableStatus(m, 429), m);
      assert.ok(!isRetryableStatus(m, 503), m);
    }
  });

  it('retries connection errors for reads; for writes only when refused; never TLS failures', () => {
    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    const refused = new Error('connect failed', {
      cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    });
    const tls = Object.assign(new Error('self-signed certificate'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' });
    assert.ok(isRetryableError('GET', reset));
    assert.ok(!isRetryableError('POST', reset));
    assert.ok(!isRetryableError('PUT', reset));
    assert.ok(isRetryableError('POST', refused));
    assert.ok(isRetryableError('PATCH', refused));
    assert.ok(!isRetryableError('GET', tls));
  });

  it('reads Retry-After as seconds or a date', () => {
    assert.equal(parseRetryAfter(undefined, 0), undefined);
    assert.equal(parseRetryAfter('3', 0), 3000);
    assert.equal(parseRetryAfter('soon', 0), undefined);
    const now = Date.parse('2025-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('Wed, 01 Jan 2025 00:00:05 GMT', now), 5000);
    assert.equal(parseRetryAfter('Wed, 01 Jan 2024 00:00:05 GMT', now), 0);
  });

  it('waits Retry-After (capped), else exponential backoff with full jitter (capped)', () => {
    const opts = { ...defaultRetry, baseDelayMs: 100, maxDelayMs: 1000 };
    assert.equal(retryDelay(1, opts, 500), 500);
    assert.equal(retryDelay(1, opts, 60_000), 1000);
    assert.equal(
      retryDelay(1, opts, undefined, () => 1),
      100,
    );
    assert.equal(
      retryDelay(3, opts, undefined, () => 1),
      400,
    );
    assert.equal(
      retryDelay(3, opts, undefined, () => 0.5),
      200,
    );
    assert.equal(
      retryDelay(10, opts, undefined, () => 1),
      1000,
    );
    assert.equal(
      retryDelay(2, opts, undefined, () => 0),
      0,
    );
  });
});

describe('retrying', () => {
  const options = { maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1000 };
  /** Lets the loop run until it parks on the clock (or settles). */
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  type Result = { status: number; retryAfter?: string };
  const byStatus = (outcome: AttemptOutcome<Result>): RetryVerdict =>
    outcome.ok
      ? { retry: isRetryableStatus('GET', outcome.value.status), retryAfter: outcome.value.retryAfter }
      : { retry: isRetryableError('GET', outcome.error) };

  it('sends again after the jittered backoff on the clock, numbering attempts, until an outcome is final', async () => {
    const clock = new FakeClock();
    const statuses = [503, 500, 200];
    const attempts: number[] = [];
    const reports: Omit<AttemptReport<Result>, 'outcome'>[] = [];
    const done = retrying(
      (attempt) => {
        attempts.push(attempt);
        return Promise.resolve({ status: statuses[attempt - 1]! });
      },
      {
        options,
        clock,
        random: () => 1,
        classify: byStatus,
        onAttempt: ({ outcome: _outcome, ...report }) => void reports.push(report),
      },
    );
    await settle();
    assert.deepEqual(attempts, [1]);
    clock.advance(99);
    await settle();
    assert.deepEqual(attempts, [1], 'sent again before the backoff');
    clock.advance(1);
    await settle();
    assert.deepEqual(attempts, [1, 2]);
    clock.advance(200);
    assert.deepEqual(await done, { status: 200 });
    assert.deepEqual(attempts, [1, 2, 3]);
    assert.deepEqual(reports, [
      { attempt: 1, retry: true, delayMs: 100 },
      { attempt: 2, retry: true, delayMs: 200 },
      { attempt: 3, retry: false },
    ]);
  });

  it('waits Retry-After (seconds, or a date read against the clock) instead of the backoff, capped', async () => {
    const clock = new FakeClock(Date.parse('2025-01-01T00:00:00Z'));
    const answers: Result[] = [
      { status: 429, retryAfter: '0' },
      { status: 503, retryAfter: 'Wed, 01 Jan 2025 00:00:03 GMT' },
      { status: 503, retryAfter: '60' },
      { status: 204 },
    ];
    const delays: (number | undefined)[] = [];
    const done = retrying((attempt) => Promise.resolve(answers[attempt - 1]!), {
      options: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 5000 },
      clock,
      random: () => 1,
      classify: byStatus,
      onAttempt: (r) => void delays.push(r.delayMs),
    });
    for (const ms of [0, 3000, 5000]) {
      await settle();
      clock.advance(ms);
    }
    assert.deepEqual(await done, { status: 204 });
    assert.deepEqual(delays, [0, 3000, 5000, undefined]);
  });

  it('stops after maxAttempts with the last outcome as it is: a value, or the error', async () => {
    const clock = new FakeClock();
    // Jitter 0: every wait is 0 ms, though still a timer on the clock.
    const run = <T>(send: () => Promise<T>, classify: (o: AttemptOutcome<T>) => RetryVerdict) => {
      let calls = 0;
      const done = retrying(
        () => {
          calls++;
          return send();
        },
        { options, clock, classify, random: () => 0 },
      );
      return { done, calls: () => calls };
    };
    const busy = run(() => Promise.resolve({ status: 503 }), byStatus);
    for (let i = 0; i < 2; i++) {
      await settle();
      clock.advance(0);
    }
    assert.deepEqual(await busy.done, { status: 503 });
    assert.equal(busy.calls(), 3);

    const reset = Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' });
    const down = run(() => Promise.reject(reset), byStatus);
    for (let i = 0; i < 2; i++) {
      await settle();
      clock.advance(0);
    }
    await assert.rejects(down.done, (err) => err === reset);
    assert.equal(down.calls(), 3);
  });

  it('settles at once when classify says no, reporting the attempt', async () => {
    const clock = new FakeClock();
    const tls = Object.assign(new Error('self-signed certificate'), { code: 'SELF_SIGNED_CERT_IN_CHAIN' });
    const reports: AttemptReport<Result>[] = [];
    await assert.rejects(
      retrying<Result>(() => Promise.reject(tls), {
        options,
        clock,
        classify: byStatus,
        onAttempt: (r) => void reports.push(r),
      }),
      (err) => err === tls,
    );
    assert.deepEqual(reports, [{ attempt: 1, outcome: { ok: false, error: tls }, retry: false }]);
    assert.equal(clock.pending, 0);
  });

  it('on abort: a wait rejects with the reason; an attempt that ended meanwhile stands, unreported and not retried', async () => {
    const clock = new FakeClock();
    const ac = new AbortController();
    let calls = 0;
    const waiting = retrying(
      () => {
        calls++;
        return Promise.resolve({ status: 503 });
      },
      { options, clock, signal: ac.signal, classify: byStatus },
    );
    await settle();
    assert.equal(clock.pending, 1);
    ac.abort(new Error('stop'));
    await assert.rejects(waiting, /stop/);
    assert.equal(calls, 1);
    assert.equal(clock.pending, 0);

    const late = new AbortController();
    const reports: AttemptReport<Result>[] = [];
    const answered = await retrying(
      () => {
        late.abort(new Error('too late'));
        return Promise.resolve({ status: 503 });
      },
      { options, clock, signal: late.signal, classify: byStatus, onAttempt: (r) => void reports.push(r) },
    );
    assert.deepEqual(answered, { status: 503 });
    assert.deepEqual(reports, []);
  });
});
