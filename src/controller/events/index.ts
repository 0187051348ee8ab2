/**
 * controller/events: Kubernetes Events for what Raven does (client-go `tools/record` semantics), written as core/v1
 * Events.
 *
 * Contract:
 * - `record()` never blocks and never throws: it correlates synchronously and queues the write; writes run one at a
 *   time in order; failures (after up to `maxAttempts` for 5xx/429/unreachable) are logged with the event's context.
 * - Correlation (client-go's EventCorrelator, an LRU keyed by source, involved object, type, reason and message): a
 *   repeat within `windowMs` PATCHes the existing Event (`count`+1, `lastTimestamp`) instead of creating another; a
 *   patch that finds the Event gone creates it again with the count so far.
 * - `{ once: true }` marks an event that reports a state a reconcile sees at every pass: an identical one within the
 *   window is dropped, not counted, so reconcilers keep no "already warned" memory of their own.
 * - Spam filter: a token bucket per source+object (1/300 qps, burst 25 by default) on the injected clock; dropped
 *   occurrences still count in the correlator.
 * - Names are `<object name>.<16 hex digits>` as client-go's; cluster-scoped objects' events go to `default`.
 * - `flush(signal)` waits for the writes queued so far; `close()` stops accepting events and flushes.
 */
export { EventRecorder, type EventRecorderOptions } from './recorder.ts';
export { EventCorrelator, type CorrelatorOptions, type Correlation, type RecordOptions } from './correlator.ts';
