/** watch: fan-out of store events to open watch streams (NDJSON), bookmarks, timeouts, slow-watcher eviction. */
export {
  WatchHub,
  encodeEvent,
  jsonLines,
  type WatchEncoding,
  type WatchSpec,
  type WatchHubOptions,
  type WatchHubStats,
} from './hub.ts';
