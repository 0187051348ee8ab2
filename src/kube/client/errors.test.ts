import assert from 'node:assert/strict';
import { describe, it } from '../../../test/support/node-test.ts';
import { RavenError, isOutage } from '../../core/index.ts';
import { failureStatus } from '../api/index.ts';
import {
  KubeStatusError,
  KubeTransportError,
  isAlreadyExists,
  isConflict,
  isExpired,
  isForbidden,
  isGone,
  isInternalError,
  isInvalid,
  isNotFound,
  isServerTimeout,
  isServiceUnavailable,
  isTimeout,
  isTooLargeResourceVersion,
  isTooManyRequests,
  isUnauthorized,
  statusFromResponse,
} from './errors.ts';

const err = (code: number, reason: Parameters<typeof failureStatus>[1]) =>
  new KubeStatusError(failureStatus(code, reason, 'm'), 'GET', '/p');

describe('KubeStatusError and its guards', () => {
  it('carries the Status, the request and a stable code', () => {
    const e = err(404, 'NotFound');
    assert.ok(e instanceof RavenError);
    assert.equal(e.code, 'KUBE_NOTFOUND');
    assert.equal(e.status.code, 404);
    assert.equal(e.httpCode, 404);
    assert.equal(e.method, 'GET');
    assert.equal(e.path, '/p');
    assert.equal(e.message, 'GET /p: 404 NotFound: m');
    assert.equal(err(418, '').code, 'KUBE_STATUS_418');
  });

  it('tells reasons apart as client-go apierrors does', () => {
    assert.ok(isNotFound(err(404, 'NotFound')));
    assert.ok(isAlreadyExists(err(409, 'AlreadyExists')) && !isConflict(err(409, 'AlreadyExists')));
    assert.ok(isConflict(err(409, 'Conflict')) && !isAlreadyExists(err(409, 'Conflict')));
    assert.ok(isGone(err(410, 'Expired')) && isGone(err(410, 'Gone')) && isExpired(err(410, 'Expired')));
    assert.ok(isInvalid(err(422, 'Invalid')));
    assert.ok(isForbidden(err(403, 'Forbidden')));
    assert.ok(isUnauthorized(err(401, 'Unauthorized')));
    assert.ok(isTooManyRequests(err(429, 'TooManyRequests')));
    assert.ok(isServerTimeout(err(500, 'ServerTimeout')) && !isInternalError(err(500, 'ServerTimeout')));
    assert.ok(isTimeout(err(504, 'Timeout')));
    assert.ok(isInternalError(err(500, 'InternalError')));
    assert.ok(isServiceUnavailable(err(503, 'ServiceUnavailable')));
    // No reason (or an unknown one): the HTTP code decides.
    assert.ok(isNotFound(err(404, '')));
    assert.ok(isGone(err(410, '')));
    // Not a status error at all.
    assert.ok(!isNotFound(new Error('404')));
    assert.ok(!isNotFound(new KubeTransportError('GET', '/p', new Error('x'))));
    assert.ok(!isNotFound(undefined));
  });

  it('turns non-Status bodies into a Status from the HTTP code', () => {
    const s = statusFromResponse(503, '<html>upstream down</html>');
    assert.equal(s.code, 503);
    assert.equal(s.reason, 'ServiceUnavailable');
    assert.equal(s.status, 'Failure');
    assert.match(s.message ?? '', /upstream down/);
    assert.equal(statusFromResponse(502, '').reason, 'InternalError');
    const real = failureStatus(409, 'Conflict', 'stale', { name: 'x', kind: 'configmaps' });
    assert.deepEqual(statusFromResponse(409, JSON.stringify(real)), real);
  });

  it('tells a too-large resourceVersion as client-go does: by cause reason, or old servers by message', () => {
    const tooLarge = (
      details: Parameters<typeof failureStatus>[3],
      message = 'Too large resource version: 9, current: 3',
    ) => new KubeStatusError(failureStatus(504, 'Timeout', message, details), 'GET', '/p');
    // What kube-apiserver ≥ 1.19 (and the embedded server) answer.
    assert.ok(
      isTooLargeResourceVersion(
        tooLarge({ causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] }),
      ),
    );
    // 1.17.0–1.18.5: the cause without its reason; before 1.17: the message alone.
    assert.ok(isTooLargeResourceVersion(tooLarge({ causes: [{ message: 'Too large resource version' }] })));
    assert.ok(isTooLargeResourceVersion(tooLarge(undefined)));
    assert.ok(!isTooLargeResourceVersion(tooLarge(undefined, 'request timed out')));
    assert.ok(!isTooLargeResourceVersion(err(504, 'Timeout')));
    assert.ok(!isTooLargeResourceVersion(err(410, 'Expired')));
    assert.ok(!isTooLargeResourceVersion(new Error('Too large resource version')));
  });

  it('an unreachable server or a 5xx is an outage; other answers are not', () => {
    assert.ok(isOutage(new KubeTransportError('GET', '/api', new Error('connect ECONNREFUSED'))));
    assert.ok(isOutage(err(503, 'ServiceUnavailable')));
    assert.ok(isOutage(err(500, 'InternalError')));
    assert.ok(!isOutage(err(429, 'TooManyRequests')));
    assert.ok(!isOutage(err(409, 'Conflict')));
    assert.ok(!isOutage(err(404, 'NotFound')));
  });

  it('KubeTransportError is KUBE_UNREACHABLE with its cause', () => {
    const cause = new Error('connect ECONNREFUSED');
    const e = new KubeTransportError('GET', '/api', cause, 'in-cluster');
    assert.equal(e.code, 'KUBE_UNREACHABLE');
    assert.equal(e.cause, cause);
    assert.match(e.message, /in-cluster/);
  });
});
