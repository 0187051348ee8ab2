/** The page's connection to the view's API: the token from the URL's fragment, and the snapshot stream. */
import type { ObjectDetail, TopologySnapshot } from '../shape.ts';

const API = 'api/';

/** `#token=…` in the address: kept for this tab and taken off the address bar (never sent in a URL). */
function token(): string | undefined {
  const fromHash = /(?:^#|&)token=([^&]+)/.exec(location.hash)?.[1];
  if (fromHash) {
    sessionStorage.setItem('raven-topology-token', decodeURIComponent(fromHash));
    history.replaceState(null, '', location.pathname + location.search);
  }
  return sessionStorage.getItem('raven-topology-token') ?? undefined;
}

function headers(): HeadersInit {
  const t = token();
  return t ? { authorization: `Bearer ${t}` } : {};
}

export async function fetchDetail(kind: string, namespace: string, name: string): Promise<ObjectDetail | string> {
  const path = [kind, namespace || '-', name].map(encodeURIComponent).join('/');
  const res = await fetch(`${API}object/${path}`, { headers: headers() });
  return res.ok ? ((await res.json()) as ObjectDetail) : `${res.status} ${res.statusText}`;
}

/**
 * Follows `events` (Server-Sent Events read over fetch, which, unlike EventSource, can send the token) and calls
 * `onSnapshot` with each snapshot; reconnects 2 s after the stream ends or fails. Returns a function that stops it.
 */
export function follow(onSnapshot: (s: TopologySnapshot) => void, onLive: (live: boolean) => void): () => void {
  const stop = new AbortController();
  const run = async (): Promise<void> => {
    while (!stop.signal.aborted) {
      try {
        const res = await fetch(`${API}events`, { headers: headers(), signal: stop.signal });
        if (!res.ok || !res.body) throw new Error(`${res.status}`);
        onLive(true);
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const event = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = event
              .split('\n')
              .filter((l) => l.startsWith('data: '))
              .map((l) => l.slice(6))
              .join('\n');
            if (data) onSnapshot(JSON.parse(data) as TopologySnapshot);
          }
        }
      } catch {
        // Reconnected below.
      }
      onLive(false);
      if (!stop.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  };
  void run();
  return () => stop.abort();
}
