/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// The media enhance sidebar in a real browser, against Node-RED started as `npm start` starts it (the
// examples deployed, the built-in engine): the tab is there with its icon; a WAV dropped into inbox/
// (example 2 watches it) shows as a row moving through its stages, then as a result whose detail view
// draws the loudness chart; the enhanced download is the file the flow wrote to outbox/.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { copyFile, readFile, readdir, rename, stat, writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import {
  closeProduct,
  launchBrowser,
  openEditor,
  recordRequests,
  ROOT,
  SCREENSHOTS,
  startProduct,
  type RequestLog,
  type RunningProduct,
} from './product';
import { docImagePath } from '../fixtures/doc-images';
import { afterEditorTest } from './editor-state';
import type { RedEditor } from './red-editor';

declare const RED: RedEditor;

/** The nodes' page shows it: rewritten there only with DOC_IMAGES=1. */
const README_IMAGE = docImagePath('sidebar.png');
const run = promisify(execFile);

describe('the media enhance sidebar in Chromium, started as npm start starts it', function () {
  this.timeout(300_000);
  let product: RunningProduct;
  let browser: Browser;
  let page: Page;
  let requests: RequestLog;

  before(async () => {
    product = await startProduct();
    browser = await launchBrowser();
    page = await openEditor(browser, product.url, (p) => (requests = recordRequests(p, product.url, /^(data|blob):/)));
    // Once loaded, the editor shows its first sidebar tab: wait for that before showing this one.
    await page.waitForSelector('#red-ui-loading-progress', { state: 'hidden', timeout: 60_000 });
  });

  afterEach(async function () {
    await afterEditorTest(this.currentTest, page, 'sidebar-');
  });

  after(() => closeProduct(browser, product));

  /** The built-in engine's media on disk: how many, and the bytes of their files. */
  async function mediaFolders(): Promise<{ media: number; bytes: number }> {
    const root = join(product.userDir, 'media-enhance-data');
    const engines = await readdir(root);
    assert.equal(engines.length, 1, `one engine's folder: ${engines.join(', ')}`);
    const media = join(root, engines[0], 'media');
    const { stdout } = await run('find', [media, '-type', 'f', '-printf', '%s\n']);
    const uids = (await readdir(media)).filter((name) => /^[0-9a-f-]{36}$/.test(name));
    return {
      media: uids.length,
      bytes: stdout
        .split('\n')
        .filter(Boolean)
        .reduce((sum, n) => sum + Number(n), 0),
    };
  }

  it('adds a "media enhance" tab with its own icon, showing each deployed service and its operations', async () => {
    await page.evaluate(() => {
      RED.menu.setSelected('menu-item-sidebar', true);
      RED.sidebar.show('media-enhance');
    });
    await page.waitForSelector('.me-sidebar .me-service', { state: 'visible', timeout: 20_000 });
    // The tab's button: a tab in Node-RED 4's sidebar, a button in Node-RED 5's.
    const tab = await page.evaluate(() => {
      const button = document.querySelector<HTMLElement>('#red-ui-tab-media-enhance, [data-tab-id="media-enhance"]');
      const icon = button?.querySelector<HTMLElement>('.red-ui-tab-icon, .red-ui-sidebar-tab-icon');
      return {
        found: Boolean(button),
        name: button?.textContent?.trim() || button?.getAttribute('aria-label') || '',
        icon: /url\("?([^")]+)"?\)/.exec(icon?.style.maskImage || icon?.style.webkitMaskImage || '')?.[1],
      };
    });
    assert.ok(tab.found, 'the tab is in the sidebar');
    assert.ok(tab.icon?.endsWith('/media-enhance-sidebar.svg'), `its own icon: ${tab.icon}`);
    const icon = await page.evaluate(async (src) => {
      const response = await fetch(src);
      return { status: response.status, type: response.headers.get('content-type') };
    }, tab.icon!);
    assert.deepEqual([icon.status, /image\/svg\+xml/.test(icon.type ?? '')], [200, true]);
    const services = await page.$$eval('.me-service', (blocks) =>
      blocks.map((block) => ({
        name: block.querySelector('.me-service-name')?.textContent,
        url: block.querySelector('.me-service-url')?.textContent ?? '',
        bars: block.querySelectorAll('.me-op-bar').length,
      })),
    );
    // Its texts come from the plugin's message catalog, as the installed package ships it.
    const catalog = JSON.parse(
      await readFile(join(ROOT, 'plugins', 'locales', 'en-US', 'media-enhance-sidebar.json'), 'utf8'),
    ) as { sidebar: { label: string; help: { title: string } } };
    assert.equal(tab.name, catalog.sidebar.label);
    // The help opens from the "?" of the tab's toolbar and closes on another click; its text is read once it shows.
    const helpButton = page.locator('.me-toolbar .me-help-toggle');
    assert.equal(await helpButton.getAttribute('title'), catalog.sidebar.help.title);
    await helpButton.click();
    await page.waitForSelector('.me-help dl', { state: 'visible' });
    assert.equal(await helpButton.getAttribute('aria-expanded'), 'true');
    assert.equal(await page.locator('.me-help .me-section-title').innerText(), catalog.sidebar.help.title);
    assert.match(await page.locator('.me-help dl').innerText(), /True peak \(dBTP\)/);
    await helpButton.click();
    await page.waitForSelector('.me-help dl', { state: 'hidden' });
    assert.ok(services.length >= 1, 'the examples deploy at least one service');
    const engine = services.find((s) => s.name === 'built-in engine');
    assert.ok(engine, `the examples' built-in engine: ${JSON.stringify(services)}`);
    assert.match(engine.url, /^http:\/\/127\.0\.0\.1:\d+/);
    // The built-in engine has no limits: no bar to fill, its counts folded into one line, so that the
    // media in flight and the results stay on the first screen.
    assert.equal(engine.bars, 5, 'one count per operation, in the fold');
    const firstScreen = await page.evaluate(() => {
      const visibleBars = [...document.querySelectorAll<HTMLElement>('.me-service .me-op-bar')].filter(
        (bar) => bar.offsetParent !== null,
      ).length;
      const sidebar = document.querySelector('.me-sidebar')!.getBoundingClientRect();
      const below = (element: Element | null | undefined) =>
        element ? element.getBoundingClientRect().bottom - sidebar.bottom : null;
      const titles = [...document.querySelectorAll('.me-sidebar .me-section-title')]
        .filter((title) => title.getClientRects().length > 0)
        .map((title) => ({ text: title.textContent, below: below(title) }));
      return {
        visibleBars,
        folded: document.querySelector('.me-ops-unlimited summary')?.textContent,
        titles,
        // The results' first line: a row, or the note that there is none yet.
        firstResult: below(document.querySelector('.me-results')?.firstElementChild),
        boxHeight: sidebar.height,
      };
    });
    assert.equal(firstScreen.visibleBars, 0, 'no bar shows');
    assert.match(firstScreen.folded ?? '', /^no rate limits · \d+ requests per 1 min$/);
    // On Node-RED 4 the tab has the sidebar's height; on Node-RED 5 it shares the sidebar with the debug
    // messages, in an upper section 300 px high (255 px for the tab): both show what is in flight and the
    // results' first line without a scroll.
    const seen = JSON.stringify(firstScreen);
    assert.deepEqual(
      firstScreen.titles.map((title) => title.text),
      ['Services', 'In flight', 'Results', 'Storage'],
      seen,
    );
    for (const title of firstScreen.titles.filter((t) => t.text === 'In flight' || t.text === 'Results'))
      assert.ok(title.below! <= 0, `"${title.text}" is on the first screen: ${seen}`);
    assert.ok(
      firstScreen.firstResult !== null && firstScreen.firstResult <= 0,
      `the results' first line is on the first screen: ${seen}`,
    );
  });

  it("keeps the tab's button in view at 1440 px beside Info and Help, its icon drawn, and in the drop-down", async () => {
    await page.setViewportSize({ width: 1440, height: 900 });
    try {
      await page.evaluate(() => {
        RED.menu.setSelected('menu-item-sidebar', true);
        RED.sidebar.show('info'); // another tab active: ours is one button among the others
      });
      // Node-RED 4: a row of buttons beside the active tab (the rest in its drop-down); Node-RED 5: a
      // column of tab buttons.
      const button = page.locator('#red-ui-tab-media-enhance-link-button, [data-tab-id="media-enhance"]').first();
      await button.waitFor({ state: 'visible', timeout: 20_000 });
      const icon = await button.evaluate((element) => {
        const drawn = element.querySelector<HTMLElement>('i, .red-ui-sidebar-tab-icon, .red-ui-tab-icon')!;
        const style = getComputedStyle(drawn);
        const box = drawn.getBoundingClientRect();
        return {
          classes: drawn.className,
          mask: style.maskImage || style.webkitMaskImage,
          width: box.width,
          height: box.height,
        };
      });
      assert.match(icon.mask, /media-enhance-sidebar\.svg/, `drawn from its own icon: ${JSON.stringify(icon)}`);
      assert.doesNotMatch(icon.classes, /fa-square-o/, 'not the empty square Node-RED draws for a tab without one');
      assert.ok(icon.width >= 10 && icon.height >= 10, `a visible size: ${icon.width} x ${icon.height}`);
      await page.locator('#red-ui-sidebar').screenshot({ path: join(SCREENSHOTS, 'sidebar-tab-button.png') });
      // Node-RED 4's drop-down of every tab draws each entry's icon class: ours is the same icon.
      const menuButton = page.locator('#red-ui-sidebar .red-ui-tab-link-button-menu');
      if ((await menuButton.count()) > 0) {
        await menuButton.click();
        const entry = page.locator('#red-ui-tabs-menu-option-media-enhance');
        await entry.waitFor({ state: 'visible', timeout: 10_000 });
        const entryMask = await entry.evaluate((element) => {
          const drawn = element.querySelector<HTMLElement>('.me-sidebar-tab-icon');
          return drawn ? getComputedStyle(drawn).maskImage || getComputedStyle(drawn).webkitMaskImage : '';
        });
        assert.match(entryMask, /media-enhance-sidebar\.svg/, 'the drop-down entry shows the icon');
        await page.screenshot({ path: join(SCREENSHOTS, 'sidebar-tab-menu.png') });
        await page.keyboard.press('Escape');
        await page.mouse.click(5, 5);
      }
    } finally {
      await page.setViewportSize({ width: 1400, height: 860 });
    }
  });

  it('shows a WAV dropped into inbox/ in flight through its stages, then as a result with its chart', async () => {
    const stages = new Set<string>();
    const uids = new Set<string>();
    const record = async () => {
      for (const row of await page.$$eval('.me-inflight-row', (rows) =>
        rows.map((r) => ({
          stage: r.querySelector('.me-stage')?.textContent ?? '',
          uid: r.querySelector('.me-uid')?.textContent ?? '',
        })),
      )) {
        // Kept with its elapsed time and percent: a row that counts on ("processing 1s", "processing 2s")
        // moves as surely as one that changes stage, and a stage of a few milliseconds (an upload over
        // loopback) is seen only when a look happens to fall in it.
        stages.add(row.stage);
        if (/^[0-9a-f-]{8}$/i.test(row.uid)) uids.add(row.uid);
      }
    };
    await page.evaluate(() => RED.sidebar.show('media-enhance'));
    const partial = join(product.userDir, 'voice.wav.part');
    await copyFile(join(ROOT, 'examples', 'speech-sample.wav'), partial);
    await rename(partial, join(product.userDir, 'inbox', 'voice.wav'));
    const outbox = join(product.userDir, 'outbox');
    const deadline = Date.now() + 90_000;
    let screenshotTaken = false;
    const resultFor = () =>
      page.$$eval('.me-result-row', (rows) =>
        rows.map((r) => ({ id: r.getAttribute('data-result-id'), text: r.textContent ?? '' })),
      );
    while (!(await resultFor()).some((r) => r.text.includes('voice') && /done/.test(r.text))) {
      assert.ok(Date.now() < deadline, `no result after 90 s; stages seen: ${[...stages].join(', ')}`);
      await record();
      if (!screenshotTaken && stages.size > 0) {
        await page.screenshot({ path: join(SCREENSHOTS, 'sidebar-in-flight.png') });
        screenshotTaken = true;
      }
      await page.waitForTimeout(100);
    }
    assert.ok(
      stages.size >= 2 && [...stages].some((s) => /^(uploading|processing|downloading|queued)\b/.test(s)),
      `the row moved on while in flight: ${[...stages].join(', ')}`,
    );
    assert.ok(uids.size >= 1, 'the row showed the media uid, shortened to 8 characters');
    await page.waitForFunction(() => document.querySelectorAll('.me-inflight-row').length === 0, undefined, {
      timeout: 10_000,
    });
    assert.ok((await readdir(outbox)).includes('voice_enhanced.wav'));

    const row = (await resultFor()).find((r) => r.text.includes('voice'))!;
    // The editor may have shown another tab meanwhile (its own info tab, once the flows loaded).
    await page.evaluate(() => RED.sidebar.show('media-enhance'));
    await page.click(`.me-result-row[data-result-id="${row.id}"]`);
    await page.waitForSelector('.me-detail svg.me-loudness-chart', { timeout: 20_000 });
    const chart = await page.evaluate(() => {
      const svg = document.querySelector('.me-detail svg.me-loudness-chart')!;
      const path = (name: string) => svg.querySelector<SVGPathElement>(`path.me-curve-${name}`);
      const line = (name: string) => svg.querySelector<SVGLineElement>(`line.me-${name}-line`);
      const box = svg.getBoundingClientRect();
      return {
        width: box.width,
        height: box.height,
        input: path('input')?.getTotalLength() ?? 0,
        output: path('output')?.getTotalLength() ?? 0,
        outputColour: getComputedStyle(path('output')!).stroke,
        inputColour: getComputedStyle(path('input')!).stroke,
        target: line('target') && Number(line('target')!.getAttribute('y1')),
        peak: line('peak') && Number(line('peak')!.getAttribute('y1')),
        texts: [...svg.querySelectorAll('text')].map((t) => t.textContent),
      };
    });
    assert.ok(chart.width > 200 && chart.height > 100, `the chart has a size: ${chart.width}x${chart.height}`);
    assert.ok(chart.input > 50 && chart.output > 50, `both curves are drawn: ${chart.input}, ${chart.output}`);
    assert.notEqual(chart.inputColour, chart.outputColour, 'the curves have distinct colours');
    assert.ok(chart.target !== null && chart.peak !== null && chart.peak < chart.target, 'ceiling above target');
    for (const label of ['input', 'output', 'target -16.0 LUFS', 'ceiling -1.0 dBTP', '0:00'])
      assert.ok(chart.texts.includes(label), `the chart says "${label}": ${chart.texts.join(' | ')}`);
    const detail = await page.locator('.me-detail').innerText();
    assert.match(detail, /integrated\s+-[\d.]+ LUFS\s+-1[56]\.\d LUFS/);
    assert.match(detail, /noise reduction|high-pass|speech leveler/, 'the stages the engine ran');
    await page.locator('#red-ui-sidebar').screenshot({ path: README_IMAGE });
    await page.screenshot({ path: join(SCREENSHOTS, 'sidebar-detail.png') });

    // The enhanced download is the file the flow wrote to outbox/, fetched as a click on the link would.
    const download = await page.evaluate(async () => {
      const link = document.querySelector<HTMLAnchorElement>('.me-detail a.me-download-enhanced')!;
      const response = await fetch(link.href);
      const body = await response.arrayBuffer();
      const bytes = new Uint8Array(body);
      const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', body));
      return {
        status: response.status,
        disposition: response.headers.get('content-disposition'),
        size: bytes.length,
        head: String.fromCharCode(...bytes.slice(0, 4)) + String.fromCharCode(...bytes.slice(8, 12)),
        sha256: [...digest].map((b) => b.toString(16).padStart(2, '0')).join(''),
      };
    });
    const written = await readFile(join(outbox, 'voice_enhanced.wav'));
    assert.equal(download.status, 200);
    assert.match(download.disposition ?? '', /^attachment/);
    assert.equal(download.head, 'RIFFWAVE');
    assert.equal(download.size, (await stat(join(outbox, 'voice_enhanced.wav'))).size);
    assert.equal(download.sha256, createHash('sha256').update(written).digest('hex'), 'the same bytes');
    const original = await page.evaluate(async () => {
      const link = document.querySelector<HTMLAnchorElement>('.me-detail a.me-download-original')!;
      return (await fetch(link.href)).status;
    });
    assert.equal(original, 200, 'the original is offered too');
  });

  /** HTMLMediaElement.HAVE_NOTHING: the element has loaded nothing. */
  const HAVE_NOTHING = 0;

  /** Resolves once the media element can play (its `canplay`), with its duration; rejects on its `error`. */
  const canPlay = (selector: string) =>
    page.evaluate(
      (audioSelector) =>
        new Promise<{ duration: number; src: string }>((resolve, reject) => {
          const audio = document.querySelector<HTMLAudioElement>(audioSelector)!;
          const done = () => resolve({ duration: audio.duration, src: audio.currentSrc });
          if (audio.readyState >= HTMLMediaElement.HAVE_FUTURE_DATA) return done();
          audio.addEventListener('canplay', done, { once: true });
          audio.addEventListener('error', () => reject(new Error(`${audioSelector}: ${audio.error?.message}`)), {
            once: true,
          });
        }),
      selector,
    );

  async function ffprobeDuration(path: string): Promise<number> {
    const { stdout } = await run('ffprobe', [
      '-v',
      'error',
      '-show_entries',
      'format=duration',
      '-of',
      'csv=p=0',
      path,
    ]);
    return Number(stdout.trim());
  }

  /** An admin token as the editor keeps it once a user logged in (adminAuth): it must not reach the player. */
  const EDITOR_TOKEN = 'editor-admin-token-7d1e';
  /** A ticket the runtime never issued, as an expired one is to it. */
  const STALE_TICKET = 'expired-ticket-0000';

  it('plays the original and the enhanced file in the detail view, switching between them at the same moment', async () => {
    await page.evaluate(() => RED.sidebar.show('media-enhance'));
    // Opened anew as a logged-in user's editor opens it: its requests carry the token.
    if (await page.locator('.me-detail').isVisible()) await page.click('.me-detail-back');
    await page.evaluate((token) => RED.settings.set('auth-tokens', { access_token: token }), EDITOR_TOKEN);
    try {
      await page.locator('.me-result-row', { hasText: 'voice.wav' }).first().click();
      await page.waitForSelector('.me-detail .me-player', { timeout: 20_000 });
    } finally {
      await page.evaluate(() => RED.settings.remove('auth-tokens'));
    }
    // Each media element's address carries a ticket of its own for its one file, never the token.
    const sources = await page.$$eval('.me-detail audio', (players) => players.map((p) => p.getAttribute('src')!));
    const tickets = sources.map((src) => new URL(src, 'http://editor/').searchParams.get('ticket'));
    for (const src of sources) {
      assert.ok(!src.includes(EDITOR_TOKEN) && !/access_token/.test(src), src);
      assert.match(src, /\/play\?step=(PRE|ENHANCED)&ticket=[\w-]{32}$/);
    }
    assert.equal(new Set(tickets).size, 2, 'a ticket per file');
    const played: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/play?step=')) played.push(new URL(request.url()).searchParams.get('step')!);
    });
    // Nothing loads before it is played: B, shown, plays (and pauses); A stays unfetched until switched to.
    await page.evaluate(async () => {
      const audio = document.querySelector<HTMLAudioElement>('.me-detail audio.me-play-enhanced')!;
      await audio.play();
      audio.pause();
    });
    const enhanced = await canPlay('.me-detail audio.me-play-enhanced');
    assert.deepEqual([...new Set(played)], ['ENHANCED'], 'the original is not fetched while the enhanced file plays');
    assert.equal(
      await page.$eval('.me-detail audio.me-play-original', (audio) => (audio as HTMLAudioElement).readyState),
      HAVE_NOTHING,
    );
    // The route answers Range requests, so the element can seek.
    const range = await page.evaluate(async (src) => {
      const response = await fetch(src, { headers: { Range: 'bytes=4-11' } });
      return {
        status: response.status,
        range: response.headers.get('content-range'),
        body: new TextDecoder().decode(await response.arrayBuffer()),
      };
    }, enhanced.src);
    assert.deepEqual(
      [range.status, range.range?.replace(/\/\d+$/, ''), range.body.slice(4)],
      [206, 'bytes 4-11', 'WAVE'],
    );
    // B shows first; A takes over at the moment B was at.
    assert.deepEqual(
      await page.$$eval('.me-detail audio', (players) => players.map((p) => (p as HTMLAudioElement).hidden)),
      [true, false],
    );
    await page.evaluate(() => {
      document.querySelector<HTMLAudioElement>('.me-detail audio.me-play-enhanced')!.currentTime = 1.5;
    });
    // A's ticket expired while the result stayed open (its address now names one the runtime never issued).
    await page.evaluate((stale) => {
      const a = document.querySelector<HTMLAudioElement>('.me-detail audio.me-play-original')!;
      a.src = a.getAttribute('src')!.replace(/ticket=[\w-]+/, `ticket=${stale}`);
    }, STALE_TICKET);
    await page.click('.me-detail .me-play-original-choice');
    const switched = await page.evaluate(() => {
      const [a, b] = [...document.querySelectorAll<HTMLAudioElement>('.me-detail audio')];
      return {
        hidden: [a.hidden, b.hidden],
        at: a.currentTime,
        pressed: [...document.querySelectorAll('.me-ab-choice')].map((c) => c.getAttribute('aria-pressed')),
      };
    });
    assert.deepEqual(switched, { hidden: [false, true], at: 1.5, pressed: ['true', 'false'] });
    // A loads when played: refused at first, it gets a new ticket and plays on from the same moment.
    const refused = page.waitForResponse((response) => response.url().includes(`ticket=${STALE_TICKET}`));
    await page.evaluate(() =>
      document
        .querySelector<HTMLAudioElement>('.me-detail audio.me-play-original')!
        .play()
        .catch(() => undefined),
    );
    assert.equal((await refused).status(), 403);
    await page.waitForFunction(
      (stale) => {
        const a = document.querySelector<HTMLAudioElement>('.me-detail audio.me-play-original')!;
        return !a.currentSrc.includes(stale) && a.readyState >= HTMLMediaElement.HAVE_FUTURE_DATA;
      },
      STALE_TICKET,
      { timeout: 20_000 },
    );
    const original = await canPlay('.me-detail audio.me-play-original');
    const resumedAt = await page.evaluate(() => {
      const a = document.querySelector<HTMLAudioElement>('.me-detail audio.me-play-original')!;
      a.pause();
      return a.currentTime;
    });
    assert.ok(resumedAt >= 1.5, `went on from 1.5 s: ${resumedAt}`);
    const truth = {
      enhanced: await ffprobeDuration(join(product.userDir, 'outbox', 'voice_enhanced.wav')),
      original: await ffprobeDuration(join(ROOT, 'examples', 'speech-sample.wav')),
    };
    assert.ok(
      Math.abs(enhanced.duration - truth.enhanced) < 0.05,
      `enhanced: ${enhanced.duration} s, ${truth.enhanced}`,
    );
    assert.ok(
      Math.abs(original.duration - truth.original) < 0.05,
      `original: ${original.duration} s, ${truth.original}`,
    );
    // Through the editor's own admin route, never the engine's address.
    for (const src of [enhanced.src, original.src])
      assert.ok(src.startsWith(`${product.url}media-enhance/media/`), src);
  });

  it('names the file of a failed result', async () => {
    // Back from the detail view to the lists.
    await page.evaluate(() => RED.sidebar.show('media-enhance'));
    if (await page.locator('.me-detail').isVisible()) await page.click('.me-detail-back');
    // An empty file fails before any media exists: its row still says which file it was.
    await writeFile(join(product.userDir, 'inbox', 'empty.wav'), '');
    const row = page.locator('.me-result-row.me-result-failed', { hasText: 'empty.wav' });
    await row.waitFor({ timeout: 60_000 });
    assert.match(await row.locator('.me-file').innerText(), /^empty\.wav$/);
  });

  it('clears the results with the trash button, and only them: the services, the storage, the media and the written files stay', async () => {
    await page.evaluate(() => RED.sidebar.show('media-enhance'));
    if (await page.locator('.me-detail').isVisible()) await page.click('.me-detail-back');
    const onDisk = await mediaFolders();
    const outbox = (await readdir(join(product.userDir, 'outbox'))).sort();
    await page.locator(`.me-storage[data-media="${onDisk.media}"][data-bytes="${onDisk.bytes}"]`).waitFor();
    const shown = () =>
      page.evaluate(() => ({
        results: document.querySelectorAll('.me-results .me-result-row').length,
        services: [...document.querySelectorAll('.me-service .me-service-name')].map((name) => name.textContent),
        inFlight: document.querySelector('.me-sidebar .me-inflight')?.textContent ?? null,
        // What it counts (its text also says how long ago the oldest media was made).
        storage: ['media', 'finished', 'bytes'].map((what) =>
          document.querySelector('.me-storage')?.getAttribute(`data-${what}`),
        ),
      }));
    const before = await shown();
    assert.ok(before.results >= 2, `voice.wav's result and the failed empty.wav's: ${JSON.stringify(before)}`);
    // Cleared from the detail view too: it closes, since its result is gone.
    await page.locator('.me-result-row', { hasText: 'voice.wav' }).first().click();
    await page.waitForSelector('.me-detail', { state: 'visible', timeout: 20_000 });
    await page.click('.me-clear-results');
    await page.waitForSelector('.me-results .me-empty', { state: 'visible', timeout: 20_000 });
    assert.ok(!(await page.locator('.me-detail').isVisible()), 'the detail view of a cleared result closes');
    const after = await shown();
    assert.equal(after.results, 0);
    assert.equal(await page.locator('.me-results .me-empty').innerText(), 'No media finished yet.');
    assert.deepEqual({ ...after, results: before.results }, before, 'services, in flight and storage as they were');
    assert.deepEqual(await mediaFolders(), onDisk, "the engine's media stay");
    assert.deepEqual((await readdir(join(product.userDir, 'outbox'))).sort(), outbox, 'the written files stay');
    // The list goes on: the next media's result shows.
    await writeFile(join(product.userDir, 'inbox', 'empty-again.wav'), '');
    const row = page.locator('.me-result-row.me-result-failed', { hasText: 'empty-again.wav' });
    await row.waitFor({ timeout: 60_000 });
    assert.equal(await page.locator('.me-results .me-result-row').count(), 1, 'only the new result');
  });

  it("shows the built-in engine's disk use as its data folder holds it, and the button removes its finished media", async () => {
    await page.evaluate(() => RED.sidebar.show('media-enhance'));
    if (await page.locator('.me-detail').isVisible()) await page.click('.me-detail-back');
    const onDisk = await mediaFolders();
    assert.ok(onDisk.media >= 1, 'the voice.wav media is kept');
    // The block is fetched again when a result comes: it shows the folder once it caught up.
    const block = page.locator(`.me-storage[data-media="${onDisk.media}"][data-bytes="${onDisk.bytes}"]`);
    await block.waitFor({ timeout: 20_000 });
    assert.match(
      await block.innerText(),
      new RegExp(`${onDisk.media} media kept \\(${onDisk.media} finished\\), [\\d.]+ (KiB|MiB)`),
    );
    assert.match(
      await page.locator('.me-storage-rule').innerText(),
      /^Finished media are removed 7 days after their last use, or sooner, oldest first, while all take more than 5\.0 GiB; none used within the last 1 h\.$/,
    );
    await page.locator('#red-ui-sidebar').screenshot({ path: join(SCREENSHOTS, 'sidebar-storage.png') });
    // A click asks first; Cancel leaves everything.
    await page.click('.me-storage-remove');
    await page.getByRole('button', { name: 'Cancel' }).click();
    assert.deepEqual(await mediaFolders(), onDisk);
    await page.click('.me-storage-remove');
    await page.click('.red-ui-notification button.me-storage-confirm');
    await page.locator('.me-storage[data-media="0"][data-finished="0"]').waitFor({ timeout: 20_000 });
    assert.deepEqual(await mediaFolders(), { media: 0, bytes: 0 });
    assert.equal(await page.locator('.me-storage').getAttribute('data-bytes'), '0');
    assert.ok(await page.locator('.me-storage-remove').isDisabled(), 'nothing left to remove');
  });

  it('sent no request off this machine and had none refused but the stale ticket', () => {
    assert.deepEqual(requests.foreign, []);
    assert.deepEqual(
      requests.failed.filter((failure) => !failure.includes(`ticket=${STALE_TICKET}`)),
      [],
    );
  });
});
