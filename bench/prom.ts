/**
 * Reads the controller's `/metrics` (Prometheus text format) as the benchmark's view of its progress: work-queue
 * depths, busy workers, reconcile counts, OpenStack requests and pool sizes. Only what the benchmarks need of the
 * format: one sample per line, `name{label="value",…} number`, comments skipped.
 */
import { request } from 'undici';

export class Scrape {
  /** `name` → its samples, each with its labels. */
  readonly #samples = new Map<string, { labels: Record<string, string>; value: number }[]>();

  constructor(text: string) {
    for (const line of text.split('\n')) {
      if (line === '' || line.startsWith('#')) continue;
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
      if (!m) continue;
      const labels: Record<string, string> = {};
      for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
      const list = this.#samples.get(m[1]!) ?? [];
      list.push({ labels, value: Number(m[3]) });
      this.#samples.set(m[1]!, list);
    }
  }

  /** The samples of `name` whose labels include `where`. */
  samples(name: string, where: Record<string, string> = {}): { labels: Record<string, string>; value: number }[] {
    return (this.#samples.get(name) ?? []).filter((s) => Object.entries(where).every(([k, v]) => s.labels[k] === v));
  }

  /** The sum of those samples (0 when there are none). */
  sum(name: string, where: Record<string, string> = {}): number {
    return this.samples(name, where).reduce((s, x) => s + x.value, 0);
  }
}

/** One scrape of `<opsUrl>/metrics`. */
export async function scrape(opsUrl: string): Promise<Scrape> {
  const res = await request(`${opsUrl}/metrics`);
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET ${opsUrl}/metrics: HTTP ${res.statusCode}`);
  return new Scrape(text);
}

/**
 * Whether Raven is busy (any of `controllers` has work queued or running), and how many OpenStack requests it has
 * made: a bench waits until neither changes for a while. With the scrape itself, for the bench's other figures.
 */
export async function ravenActivity(
  opsUrl: string,
  controllers: readonly string[],
): Promise<{ busy: boolean; requests: number; metrics: Scrape }> {
  const m = await scrape(opsUrl);
  const busy = controllers.some(
    (c) =>
      m.sum('workqueue_depth', { name: c }) > 0 || m.sum('controller_runtime_active_workers', { controller: c }) > 0,
  );
  return { busy, requests: m.sum('raven_openstack_requests_total'), metrics: m };
}
