import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { defaultRetry, isRetryableError, isRetryableStatus, parseRetryAfter, retryDelay } from './http-retry.ts';

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
