/**
 * controller/events: Kubernetes Events for what Raven does (client-go `tools/record` semantics), written as core/v1
 * Events.
 *
 * Contract:
 * - `record()` never blocks and never throws: it correlates synchronously and queues the write; writes run one at a
 *   time in order; failures (after up to `maxAttempts` for 5xx/429/unreachable) are logged with the event's context.
 * - Aggregation (client-go's EventCorrelator, keyed by source, involved object, type and reason; differences in
 *   `correlator.ts`): an occurrence within `windowMs` (10 min) of the last is counted on the current Event (`count`,
 *   `lastTimestamp`, the latest message); at most one new Event per object, type and reason per `newEventIntervalMs`
 *   (60 s): a changed message within it is folded in, after it starts a new Event.
 * - Writes are coalesced: a new Event is created at once; its repeats reach the API as one PATCH per `coalesceMs`
 *   (10 s) carrying the accumulated count; a patch that finds the Event gone creates it again with the count so far.
 * - `{ once: true }` marks an event that reports a state a reconcile sees at every pass: a repeat of the Event's
 *   latest message is dropped, not counted, so reconcilers keep no "already warned" memory of their own.
 * - Spam filter: a token bucket per source+object (1/300 qps, burst 25 by default) on the injected clock, charged
 *   per write; occurrences whose writes it drops still count, and the next write carries them.
 * - Messages are what a person reads: callers keep request ids out of them (`RavenError.requestId`, logged instead),
 *   or every repeat of one failure would read differently.
 * - Names are `<object name>.<16 hex digits>` as client-go's, the object's name cut so that the whole fits in 253
 *   characters; cluster-scoped objects' events go to `default`.
 * - `flush(signal)` writes what is waiting out `coalesceMs` and waits for the writes queued so far; `close()` stops
 *   accepting events and flushes.
 */
export { EventRecorder, type EventRecorderOptions, type LatestEvent } from './recorder.ts';
export { EventCorrelator, type CorrelatorOptions, type Correlation, type RecordOptions } from './correlator.ts';
