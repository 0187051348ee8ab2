import { realClock, silentLogger, errorMessage, type Clock, type Logger, type TimerHandle } from '../core/index.ts';
import type { TopologySnapshot } from './shape.ts';

export interface SnapshotHubOptions {
  snapshot: () => TopologySnapshot;
  /** How often a change is looked for while a client listens (500 ms: a change reaches the page within 1 s). */
  intervalMs?: number;
  /** At most this many streams at once; one more is refused (503). */
  maxClients?: number;
  clock?: Clock;
  logger?: Logger;
}

/** A snapshot as JSON, and what it is compared by (everything but `generatedAt`). */
interface Encoded {
  json: string;
  body: string;
}

function encode(snap: TopologySnapshot): Encoded {
  const { generatedAt, ...rest } = snap;
  const body = JSON.stringify(rest);
  return { body, json: `{"generatedAt":${JSON.stringify(generatedAt)},${body.slice(1)}` };
}

/** One listening client: at most one snapshot waits for it (the newest), so a slow reader costs one, never a backlog. */
class Client {
  #waiting: string | undefined;
  #wake: (() => void) | undefined;
  #closed = false;

  offer(json: string): void {
    this.#waiting = json;
    this.#wake?.();
  }

  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  /** The next snapshot to write, or undefined once closed. */
  async next(): Promise<string | undefined> {
    while (this.#waiting === undefined && !this.#closed) await new Promise<void>((resolve) => (this.#wake = resolve));
    this.#wake = undefined;
    const json = this.#waiting;
    this.#waiting = undefined;
    return this.#closed ? undefined : json;
  }
}

/**
 * The snapshot stream's hub: while at least one client listens, it builds the snapshot every `intervalMs` and hands
 * it to each client when it differs from the last one sent (changes within an interval are coalesced into one). Each
 * client holds at most the newest snapshot not yet written (a client that fell behind skips to the fresh one). Built
 * from Raven's caches and records only, so a listener costs no OpenStack or Kubernetes request.
 */
export class SnapshotHub {
  readonly #o: Required<Omit<SnapshotHubOptions, 'logger' | 'clock'>>;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #clients = new Set<Client>();
  #timer: TimerHandle | undefined;
  #last: Encoded | undefined;

  constructor(options: SnapshotHubOptions) {
    this.#o = { intervalMs: 500, maxClients: 32, ...options };
    this.#clock = options.clock ?? realClock;
    this.#log = options.logger ?? silentLogger;
  }

  get clients(): number {
    return this.#clients.size;
  }

  /** The current snapshot as JSON (what the snapshot endpoint answers). */
  current(): string {
    return encode(this.#o.snapshot()).json;
  }

  /**
   * An SSE body for one client: a `snapshot` event at once, then one per change; undefined when `maxClients` listen.
   * Cancelling the body (the client went) removes the client.
   */
  open(): ReadableStream<Uint8Array> | undefined {
    if (this.#clients.size >= this.#o.maxClients) return undefined;
    const client = new Client();
    const first = encode(this.#o.snapshot());
    this.#clients.add(client);
    client.offer(first.json);
    if (this.#clients.size === 1) {
      this.#last = first;
      this.#schedule();
    }
    const utf8 = new TextEncoder();
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          const json = await client.next();
          if (json === undefined) return controller.close();
          controller.enqueue(utf8.encode(`event: snapshot\ndata: ${json}\n\n`));
        },
        cancel: () => this.#drop(client),
      },
      { highWaterMark: 0 },
    );
  }

  /** Ends every stream (the server stops). */
  close(): void {
    for (const client of this.#clients) this.#drop(client);
  }

  #drop(client: Client): void {
    client.close();
    this.#clients.delete(client);
    if (this.#clients.size === 0 && this.#timer !== undefined) {
      this.#clock.clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #schedule(): void {
    this.#timer = this.#clock.setTimeout(() => this.#tick(), this.#o.intervalMs);
  }

  #tick(): void {
    this.#timer = undefined;
    if (this.#clients.size === 0) return;
    try {
      const now = encode(this.#o.snapshot());
      if (now.body !== this.#last?.body) {
        this.#last = now;
        for (const client of this.#clients) client.offer(now.json);
      }
    } catch (err) {
      // A snapshot that fails to build must not end the stream: the next tick tries again.
      this.#log.warn({ err: errorMessage(err) }, 'topology snapshot failed');
    }
    this.#schedule();
  }
}
