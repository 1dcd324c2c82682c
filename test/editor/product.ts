// The product as a user runs it: `npm start`'s script (Node-RED with this package npm-installed into a
// user dir, the examples deployed, the built-in engine), and Debian's Chromium driven by playwright-core.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freePort } from '../fixtures/free-port';

export const ROOT = join(__dirname, '..', '..', '..');
export const SCREENSHOTS = join(ROOT, 'test-artifacts', 'screenshots');

export interface RunningProduct {
  url: string;
  userDir: string;
  output: string[];
  /** Sends SIGINT, as Ctrl-C does; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `npm start`'s script in a new user folder, or in `userDir` (a second start of the same one). */
export async function startProduct(userDir?: string): Promise<RunningProduct> {
  userDir ??= await mkdtemp(join(tmpdir(), 'node-red-user-'));
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'dist', 'scripts', 'start.js')], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(port), NODE_RED_USER_DIR: userDir },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`npm start printed no editor URL in 240 s:\n${output.join('')}`)),
      240_000,
    );
    const read = (chunk: Buffer) => {
      output.push(chunk.toString());
      const match = /Node-RED editor: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(output.join(''));
      if (match) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`npm start exited (${code}):\n${output.join('')}`)));
  });
  return {
    url,
    userDir,
    output,
    async stop() {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGINT');
      const [code] = (await once(child, 'exit')) as [number | null];
      return code;
    },
  };
}

/** Debian's Chromium, never a downloaded one; `flags` go after the ones every test uses. */
export async function launchBrowser(flags: string[] = []): Promise<Browser> {
  await mkdir(SCREENSHOTS, { recursive: true });
  // playwright gives each launch a fresh profile.
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
      ...flags,
    ],
  });
}

/** What a page asked for that failed or left the product, filled as the page loads. */
export interface RequestLog {
  /** Requests that failed, or were answered with a status of 400 or more: "url (reason)". */
  failed: string[];
  /** Requests to anywhere but the product (and the URL schemes `inPage` names, which never leave the page). */
  foreign: string[];
}

/** Records `page`'s failed and foreign requests; call it before the page loads (openEditor's `prepare`). */
export function recordRequests(page: Page, productUrl: string, inPage: RegExp): RequestLog {
  const log: RequestLog = { failed: [], foreign: [] };
  page.on('requestfailed', (request) => log.failed.push(`${request.url()} (${request.failure()?.errorText})`));
  page.on('response', (response) => {
    if (response.status() >= 400) log.failed.push(`${response.url()} (${response.status()})`);
  });
  page.on('request', (request) => {
    if (!request.url().startsWith(productUrl) && !inPage.test(request.url())) log.foreign.push(request.url());
  });
  return log;
}

/** Opens the editor and waits until the palette knows every node of this package. */
export async function openEditor(browser: Browser, url: string, prepare?: (page: Page) => void): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 860 } });
  prepare?.(page); // e.g. listeners that must see the first load
  await page.goto(url);
  // Each node file waits for the editor script before it registers, so the types arrive one by one.
  const types = Object.keys(
    (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { 'node-red': { nodes: object } })['node-red']
      .nodes,
  );
  await page.waitForFunction(
    (expected) => {
      const red = (window as unknown as { RED?: { nodes?: { getType?: (t: string) => unknown } } }).RED;
      return (
        expected.every((type) => Boolean(red?.nodes?.getType?.(type))) &&
        document.querySelector('.red-ui-palette-node') !== null
      );
    },
    types,
    { timeout: 60_000 },
  );
  return page;
}

/**
 * After a browser test file: closes the browser, stops the product with Ctrl-C (which must end it
 * cleanly), lets `check` read what it printed, and removes its user folder. Either may never have started.
 */
export async function closeProduct(
  browser: Browser | undefined,
  product: RunningProduct | undefined,
  check?: (product: RunningProduct) => void,
): Promise<void> {
  await browser?.close();
  if (!product) return;
  assert.equal(await product.stop(), 0, 'Ctrl-C stops Node-RED and the engine cleanly');
  check?.(product);
  await rm(product.userDir, { recursive: true, force: true });
}
