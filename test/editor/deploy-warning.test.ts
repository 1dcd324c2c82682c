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
    // The flow is imported as a user imports one: pasted into Import, then put down with a click.
    await page.evaluate(() => RED.actions.invoke('core:show-import-dialog'));
    const text = page.locator('#red-ui-clipboard-dialog-import-text');
    await text.fill(JSON.stringify(FLOW));
    await text.press('End'); // Import checks the text on a key's release
    await page.waitForFunction(
      () => !document.querySelector<HTMLButtonElement>('#red-ui-clipboard-dialog-ok')!.disabled,
      null,
      { timeout: 30_000 },
    );
    await page.click('#red-ui-clipboard-dialog-ok');
    await page.waitForFunction(() => RED.view.state() === RED.state.IMPORT_DRAGGING, null, { timeout: 30_000 });
    await page.mouse.click(700, 500);
    await page.waitForFunction(() => RED.view.state() === RED.state.DEFAULT, null, { timeout: 30_000 });
    await dismissNotifications(page); // "Imported: 2 nodes"
  });

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
});
