/**
 * The JSON forms of the API's time messages (`{seconds, nanos}` on the wire): Time is RFC 3339 to the second,
 * MicroTime to the microsecond, both in UTC; a zero Time is JSON `null` (an empty message on the wire). Duration is
 * Go's duration string (`1h2m3.5s`) over int64 nanoseconds.
 */

/** RFC 3339 text → seconds and nanoseconds since the epoch; undefined when it is not a timestamp. */
export function parseTimestamp(text: string): { seconds: number; nanos: number } | undefined {
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (Number.isNaN(ms)) return undefined;
  return { seconds: Math.floor(ms / 1000), nanos: Number((m[2] ?? '').padEnd(9, '0')) };
}

function isoSeconds(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19);
}

/** `metav1.Time`'s JSON: seconds precision, UTC. */
export function formatTime(seconds: number): string {
  return `${isoSeconds(seconds)}Z`;
}

/** `metav1.MicroTime`'s JSON: six fractional digits, UTC. */
export function formatMicroTime(seconds: number, nanos: number): string {
  return `${isoSeconds(seconds)}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z`;
}

const units: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };

/** Go's `time.ParseDuration` → nanoseconds; undefined when malformed. */
export function parseDuration(text: string): number | undefined {
  if (text === '0') return 0;
  const m = /^([-+]?)((?:\d+(?:\.\d*)?(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(text);
  if (!m) return undefined;
  let total = 0;
  for (const [, value, unit] of m[2]!.matchAll(/(\d+(?:\.\d*)?)(ns|us|µs|μs|ms|s|m|h)/g))
    total += Number(value) * units[unit!]!;
  return Math.round(m[1] === '-' ? -total : total);
}

/** Go's `time.Duration.String()` of nanoseconds. */
export function formatDuration(nanos: number): string {
  if (nanos === 0) return '0s';
  const sign = nanos < 0 ? '-' : '';
  let n = Math.abs(nanos);
  if (n < 1e3) return `${sign}${n}ns`;
  if (n < 1e6) return `${sign}${trim(n / 1e3)}µs`;
  if (n < 1e9) return `${sign}${trim(n / 1e6)}ms`;
  let out = '';
  const h = Math.floor(n / 3600e9);
  n -= h * 3600e9;
  const min = Math.floor(n / 60e9);
  n -= min * 60e9;
  if (h > 0) out += `${h}h`;
  if (h > 0 || min > 0) out += `${min}m`;
  return `${sign}${out}${trim(n / 1e9)}s`;
}

function trim(value: number): string {
  return String(Number(value.toFixed(9)));
}
