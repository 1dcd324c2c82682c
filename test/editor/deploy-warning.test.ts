/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
// Deploying a flow with an invalid setting, in a real browser against Node-RED started as `npm start`
// starts it: Node-RED's own warning lists the node, and under it the reason, naming the setting, the
// value and the rule, as the edit dialog's field shows it too.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { LOUDNESS_TARGET } from '../../src/contract/fields';
import { closeProduct, launchBrowser, openEditor, SCREENSHOTS, startProduct, type RunningProduct } from './product';
import { afterEditorTest, dismissNotifications, waitForDialog } from './editor-state';
import type { RedEditor } from './red-editor';
import { deployedId } from '../fixtures/example-flows';

declare const RED: RedEditor;
/** The editor's jQuery: what is still sliding in. */
declare const $: (selector: string) => { length: number };

/** Two enhance-file nodes a user might paste, each with one mistake, on the example's engine. */
const FLOW = [
  {
    id: 'dw-weekly',
    type: 'media-enhance-file',
    name: 'weekly show',
    service: deployedId('me-example-engine'),
    loudnessTarget: '-16.5',
    output: 'file',
    folder: 'outbox',
    x: 200,
    y: 80,
    wires: [[]],
  },
  {
    id: 'dw-archive',
    type: 'media-enhance-file',
    name: 'archive copy',
    service: deployedId('me-example-engine'),
    loudnessTarget: '-16',
    output: 'file',
    folder: '',
    x: 200,
    y: 160,
    wires: [[]],
  },
];

const TARGET_REASON =
  `Target loudness: a whole number from ${LOUDNESS_TARGET.min} to ${LOUDNESS_TARGET.max}, ` +
  `or empty for the service's default (got "-16.5")`;
const FOLDER_REASON = 'Folder: a folder is required to write files to (it is empty)';

/** In the page: the deploy warning's entries, each with the reasons listed under it. */
function readWarning(): { entry: string; reasons: string[] }[] {
  const list = document.querySelector('#red-ui-notifications ul.red-ui-deploy-dialog-confirm-list');
  return [...(list?.children ?? [])].map((item) => ({
    entry: [...item.childNodes]
      .filter((child) => child.nodeType === Node.TEXT_NODE)
      .map((child) => child.textContent)
      .join('')
      .trim(),
    reasons: [...item.querySelectorAll('.me-deploy-reasons > li')].map((reason) => reason.textContent ?? ''),
  }));
}

describe('a deploy with an invalid setting, in Chromium', function () {
  this.timeout(300_000);
  let product: RunningProduct;
  let browser: Browser;
  let page: Page;

  before(async () => {
    product = await startProduct();
    browser = await launchBrowser();
    page = await openEditor(browser, product.url);
    await page.waitForSelector('#red-ui-loading-progress', { state: 'hidden', timeout: 60_000 });
    await importFlow(FLOW, 700, 500);
  });

  /** Imports `flow` as a user imports one: pasted into Import, then put down with a click at (x, y). */
  async function importFlow(flow: object[], x: number, y: number): Promise<void> {
    await page.evaluate(() => RED.actions.invoke('core:show-import-dialog'));
    const text = page.locator('#red-ui-clipboard-dialog-import-text');
    await text.fill(JSON.stringify(flow));
    await text.press('End'); // Import checks the text on a key's release
    await page.waitForFunction(
      () => !document.querySelector<HTMLButtonElement>('#red-ui-clipboard-dialog-ok')!.disabled,
      null,
      { timeout: 30_000 },
    );
    await page.click('#red-ui-clipboard-dialog-ok');
    await page.waitForFunction(() => RED.view.state() === RED.state.IMPORT_DRAGGING, null, { timeout: 30_000 });
    await page.mouse.click(x, y);
    await page.waitForFunction(() => RED.view.state() === RED.state.DEFAULT, null, { timeout: 30_000 });
    await dismissNotifications(page); // "Imported: 2 nodes"
  }

  /** Opens Node-RED's deploy warning and reads it once its reasons are in and it has stopped sliding. */
  async function deployWarning(entries: number): Promise<{ entry: string; reasons: string[] }[]> {
    await page.click('#red-ui-header-button-deploy');
    const reasons = page.locator('#red-ui-notifications .red-ui-deploy-dialog-confirm-list .me-deploy-reasons');
    await reasons.nth(entries - 1).waitFor({ state: 'visible', timeout: 30_000 });
    await page.waitForFunction(() => $('#red-ui-notifications :animated').length === 0, null, { timeout: 30_000 });
    return page.evaluate(readWarning);
  }

  afterEach(async function () {
    await afterEditorTest(this.currentTest, page, 'deploy-');
  });

  after(() => closeProduct(browser, product));

  it("lists under each invalid node in Node-RED's deploy warning the setting, the value and the rule", async () => {
    await page.click('#red-ui-header-button-deploy');
    // The warning as the user reads it, once its entries have their reasons.
    const reasons = page.locator('#red-ui-notifications .red-ui-deploy-dialog-confirm-list .me-deploy-reasons');
    await reasons.nth(1).waitFor({ state: 'visible', timeout: 30_000 });
    // The warning slides down into view: it is read, and pictured, once it is still.
    await page.waitForFunction(() => $('#red-ui-notifications :animated').length === 0, null, { timeout: 30_000 });
    const warning = await page.evaluate(readWarning);
    const entryOf = (name: string) => {
      const found = warning.filter((item) => item.entry.includes(`${name} (media-enhance-file)`));
      assert.equal(found.length, 1, `one entry for "${name}" in ${JSON.stringify(warning)}`);
      return found[0];
    };
    assert.deepEqual(entryOf('weekly show').reasons, [TARGET_REASON]);
    assert.deepEqual(entryOf('archive copy').reasons, [FOLDER_REASON]);
    assert.match(
      await page.locator('#red-ui-notifications .red-ui-notification').last().innerText(),
      /not properly configured[\s\S]*weekly show[\s\S]*Target loudness[\s\S]*-16\.5/,
      "the reasons are in Node-RED's own warning, under its words",
    );
    await page.screenshot({ path: join(SCREENSHOTS, 'deploy-warning.png') });
    // Cancel deploys nothing.
    await page.getByRole('button', { name: 'Cancel' }).click();
    await reasons.first().waitFor({ state: 'detached', timeout: 30_000 });
  });

  it("shows the same reason at the field, in the node's edit dialog", async () => {
    await page.evaluate(() => RED.menu.setSelected('menu-item-sidebar', false)); // room for the dialog
    await page.evaluate(() => {
      let weekly: unknown;
      RED.nodes.eachNode<{ name?: string }>((n) => void (n.name === 'weekly show' && (weekly = n)));
      RED.editor.edit(weekly);
    });
    await waitForDialog(page);
    const target = page.locator('#node-input-loudnessTarget');
    await page.waitForFunction(
      () => document.querySelector('#node-input-loudnessTarget')!.classList.contains('input-error'),
      null,
      { timeout: 10_000 },
    );
    await target.hover();
    await page.locator('.red-ui-popover', { hasText: TARGET_REASON }).waitFor({ timeout: 15_000 });
  });

  it('gives a node dropped from the palette the lone service, so that Deploy has nothing to warn of it', async () => {
    const fileNodes = () =>
      page.evaluate(() => {
        const found: { id: string; service?: string; valid?: boolean }[] = [];
        RED.nodes.eachNode<{ id: string; type: string; service?: string; valid?: boolean }>((n) => {
          if (n.type === 'media-enhance-file') found.push({ id: n.id, service: n.service, valid: n.valid });
        });
        return found;
      });
    const before = new Set((await fileNodes()).map((n) => n.id));
    // Dragged from the palette onto an empty spot of the canvas, as a user does.
    const entry = page.locator('.red-ui-palette-node[data-palette-type="media-enhance-file"]');
    await entry.scrollIntoViewIfNeeded();
    const from = (await entry.boundingBox())!;
    const canvas = (await page.locator('#red-ui-workspace-chart').boundingBox())!;
    await page.mouse.move(from.x + from.width / 2, from.y + from.height / 2);
    await page.mouse.down();
    for (let step = 1; step <= 10; step++) {
      await page.mouse.move(
        from.x + ((canvas.x + canvas.width - 150 - from.x) * step) / 10,
        from.y + ((canvas.y + 60 - from.y) * step) / 10,
      );
    }
    await page.mouse.up();
    await page.waitForFunction(
      (count) => {
        let now = 0;
        RED.nodes.eachNode<{ type: string }>((n) => void (n.type === 'media-enhance-file' && now++));
        return now > count;
      },
      before.size,
      { timeout: 30_000 },
    );
    const dropped = (await fileNodes()).filter((n) => !before.has(n.id));
    assert.equal(dropped.length, 1, 'one node dropped');
    assert.equal(dropped[0].service, deployedId('me-example-engine'), "the only config node is the node's service");
    assert.equal(dropped[0].valid, true, 'nothing for the deploy warning to list');
    await page.screenshot({ path: join(SCREENSHOTS, 'dropped-node.png') });
  });

  it('warns before Deploy of a node using an extension its remote service is listed as not declaring', async () => {
    // A remote service (an engine cluster behind a load balancer, say) whose dialog lists its extensions:
    // output encoding ticked, loudness only not.
    await importFlow(
      [
        {
          id: 'dw-cluster',
          type: 'media-enhance-config',
          name: 'studio cluster',
          mode: 'remote',
          baseUrl: 'http://127.0.0.1:9',
          extensions: 'listed',
          declaresOutputEncoding: true,
          declaresLoudnessOnly: false,
        },
        {
          id: 'dw-jingles',
          type: 'media-enhance-file',
          name: 'jingles',
          service: 'dw-cluster',
          model: 'LOUDNESS_ONLY',
          transcode: 'MP3',
          bitrate: '128',
          output: 'buffer',
          x: 200,
          y: 240,
          wires: [[]],
        },
      ],
      700,
      650,
    );
    const warning = await deployWarning(3);
    const jingles = warning.filter((item) => item.entry.includes('jingles (media-enhance-file)'));
    assert.equal(jingles.length, 1, JSON.stringify(warning));
    assert.deepEqual(jingles[0].reasons, [
      'Model: uses the "loudness-only" extension, which the service "studio cluster" does not declare ' +
        '(tick it in the service\'s Extensions if it does, or leave the setting empty) (got "LOUDNESS_ONLY")',
    ]);
    await page.screenshot({ path: join(SCREENSHOTS, 'deploy-warning-extension.png') });
    await page.getByRole('button', { name: 'Cancel' }).click();
    await dismissNotifications(page);
    // Ticked in the service's dialog, the node is valid again.
    const valid = await page.evaluate(() => {
      const cluster = RED.nodes.node('dw-cluster') as { declaresLoudnessOnly: boolean };
      cluster.declaresLoudnessOnly = true;
      const jinglesNode = RED.nodes.node('dw-jingles') as { valid?: boolean };
      (RED as unknown as { editor: { validateNode(node: unknown): void } }).editor.validateNode(jinglesNode);
      return jinglesNode.valid;
    });
    assert.equal(valid, true);
  });
});
