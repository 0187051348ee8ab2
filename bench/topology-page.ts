/**
 * The topology page at 1,000 pods in a real browser: Debian's chromium, headless, driven by playwright-core, reading
 * the view's app over real HTTP on 127.0.0.1 (the fixture of `topology.ts`, no Raven around it). Measures what a
 * person waits for and what each change costs the page: the first render, the DOM it draws, the SSE event's size, and
 * for each of 10 changes (a pod added) the time until the page shows it and the browser's main-thread time.
 */
import { existsSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Browser } from 'playwright-core';
import { bundleTopologyUi, createTopologyApp } from '../src/dashboard/index.ts';
import { listen } from '../src/daemon/http-server.ts';
import { fmtInt, fmtMs, type Row } from './support.ts';
import { topologyFixture } from './topology.ts';

const CHROMIUM = '/usr/bin/chromium';
const CHANGES = 10;
/** The app's change check (its default). */
const CHECK_MS = 500;

export const topologyPageNotes = [
  `- topology page: the view's app (\`createTopologyApp\`, 500 ms change checks) over node:http on 127.0.0.1 serving the fixture above; ${CHROMIUM} headless (playwright-core, one tab). First render: navigation until every namespace's header is drawn. Each change adds one pod to the first namespace; "on the page" is from the change to the header's pod count showing it (it includes the wait for the next 500 ms check), main-thread time is chromium's TaskDuration (CDP \`Performance.getMetrics\`) over ${CHANGES} more changes 500 ms apart with nothing polling the page, per change. Skipped where ${CHROMIUM} is absent.`,
];

/** Runs in the page: whether its header says this many pods. */
const showsPods = (text: string): boolean =>
  (globalThis as unknown as { document: { querySelector(s: string): { textContent: string | null } | null } }).document
    .querySelector('header')
    ?.textContent?.includes(text) ?? false;

/** The first `snapshot` event of the stream, in bytes. */
async function firstEventBytes(url: string): Promise<number> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  let text = '';
  for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
    text += chunk;
    if (text.includes('\n\n')) break;
  }
  return Buffer.byteLength(text.slice(0, text.indexOf('\n\n') + 2));
}

export async function benchTopologyPage(): Promise<Row[]> {
  const condition = '1,000 pods in 20 namespaces, 100 LBs, 40 policies; chromium headless';
  if (!existsSync(CHROMIUM))
    return [{ benchmark: 'topology page in chromium', condition, result: `skipped: ${CHROMIUM} is absent` }];
  const fixture = topologyFixture();
  const ui = await bundleTopologyUi();
  const app = createTopologyApp({ source: fixture.source, assets: () => Promise.resolve(ui) });
  const server = await listen(app, { host: '127.0.0.1', port: 0 });
  let browser: Browser | undefined;
  try {
    const eventBytes = await firstEventBytes(`${server.url}/topology/api/events`);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox'],
      timeout: 30_000,
    });
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');
    const taskSeconds = async (): Promise<number> =>
      (await cdp.send('Performance.getMetrics')).metrics.find((m) => m.name === 'TaskDuration')?.value ?? 0;

    let started = performance.now();
    await page.goto(`${server.url}/topology/`, { timeout: 15_000 });
    await page.locator('[data-namespace="ns-19"]').waitFor();
    const firstMs = performance.now() - started;
    const domNodes = await page.locator('*').count();

    const shownMs: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      started = performance.now();
      fixture.addPod(0, 1_000 + i, `late-${i}`);
      // Checked on every animation frame (a locator's wait polls ever more slowly, up to 1 s apart).
      await page.waitForFunction(showsPods, `· ${1_001 + i} pods`, { polling: 'raf', timeout: 15_000 });
      shownMs.push(performance.now() - started);
    }
    // The page's own work per change, with nothing polling it: one change per check interval, then a last interval.
    const before = await taskSeconds();
    for (let i = 0; i < CHANGES; i++) {
      fixture.addPod(1, 1_000 + i, `late-${i}`);
      await sleep(CHECK_MS);
    }
    await sleep(CHECK_MS);
    const perChangeMs = (((await taskSeconds()) - before) * 1000) / CHANGES;
    shownMs.sort((a, b) => a - b);
    return [
      {
        benchmark: 'topology page in chromium',
        condition,
        result:
          `first render ${fmtMs(firstMs)}, ${fmtInt(domNodes)} DOM elements; SSE event ${fmtInt(eventBytes)} B; ` +
          `a change on the page p50 ${fmtMs(shownMs[CHANGES >> 1]!)} (max ${fmtMs(shownMs[CHANGES - 1]!)}), ` +
          `main thread ${fmtMs(perChangeMs)} per change`,
      },
    ];
  } finally {
    await browser?.close();
    app.close();
    await server.close();
  }
}
