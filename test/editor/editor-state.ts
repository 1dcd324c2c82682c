/// <reference lib="dom" />
// Waiting for the editor as a user does, and putting it back in a known state after each test.
// A dialog (a "tray" in Node-RED's editor) is in the page before it is ready for typing: tray.js moves
// the focus to the dialog's first field once it has slid in, a timer's tick later, and keys pressed
// before that land wherever the focus goes, so a value typed "into" a field can be lost. On a busy
// machine that tick comes late. And a dialog, a modal notification or nodes still following the mouse,
// left by a failed test, would make every later test fail too.
import { join } from 'node:path';
import type { Locator, Page } from 'playwright-core';
import { SCREENSHOTS } from './product';
import type { RedEditor } from './red-editor';

declare const RED: RedEditor;
/** The editor's jQuery, with jQuery UI's dialogs. */
declare const $: (selector: string) => { filter(selector: string): { dialog(method: 'close'): void } };

/** Long enough for a dialog or a notification on a machine whose cores are all busy. */
const SETTLE_MS = 30_000;

/** The dialogs in the page: only the one on top is (Node-RED detaches the ones under it). */
const TRAYS = '#red-ui-editor-stack > .red-ui-tray';

/**
 * Resolves once the dialog on top is ready for typing: it has slid in (tray.js sets `right: 0`) and the
 * editor has moved the focus into it.
 */
export async function waitForDialog(page: Page): Promise<void> {
  await page.waitForFunction(
    (trays) => {
      const tray = [...document.querySelectorAll<HTMLElement>(trays)].pop();
      return tray?.style.right === '0px' && tray.contains(document.activeElement);
    },
    TRAYS,
    { timeout: SETTLE_MS },
  );
}

/** Types `value` into `field` as a user does, and resolves once the field holds it. */
export async function typeInto(field: Locator, value: string): Promise<void> {
  await field.fill(value);
  const deadline = Date.now() + SETTLE_MS;
  for (;;) {
    const shown = await field.inputValue();
    if (shown === value) return;
    if (Date.now() > deadline) throw new Error(`${field.toString()} shows "${shown}" after typing "${value}"`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Closes every notification, as its own close does (which also lifts a modal one's shade). */
export async function dismissNotifications(page: Page): Promise<void> {
  await page.evaluate(() => {
    for (const note of document.querySelectorAll<HTMLElement & { close?: () => void }>(
      '#red-ui-notifications .red-ui-notification',
    ))
      note.close?.();
  });
  // A closed notification slides up before it leaves the page; a later test's wait must not find it.
  const gone = () => document.querySelector('#red-ui-notifications .red-ui-notification') === null;
  await page.waitForFunction(gone, null, { timeout: SETTLE_MS });
}

/**
 * After each test: a screenshot of a failed test's page (`failed-<prefix><title>.png` in SCREENSHOTS),
 * then the editor brought back to rest, so whatever a test left open, the next one starts from the editor
 * at rest: one failure is one failure.
 */
export async function afterEditorTest(
  test: Mocha.Test | undefined,
  page: Page | undefined,
  prefix: string,
): Promise<void> {
  if (!page) return;
  if (test?.state === 'failed')
    await page.screenshot({
      path: join(SCREENSHOTS, `failed-${prefix}${test.title.replace(/\W+/g, '-').slice(0, 60)}.png`),
    });
  await resetEditor(page);
}

/**
 * Brings the editor back to rest: nodes still following the mouse after an import are dropped (as
 * Escape does), open dialogs are closed (jQuery UI's, such as Import, and every tray, top first, with
 * RED.tray.close() until none is open), and notifications are dismissed.
 */
export async function resetEditor(page: Page): Promise<void> {
  await page.evaluate(() => {
    RED.actions.invoke('core:select-none');
    $('.ui-dialog-content').filter(':visible').dialog('close');
  });
  for (let closed = 0; (await page.locator(TRAYS).count()) > 0; closed++) {
    if (closed === 10) throw new Error('ten dialogs closed and one is still open');
    // One still opening (or sliding back in as the one above it closes) is let finish: closed halfway,
    // its completion would put the editor's shade back over a closed dialog.
    const tray = await page.waitForFunction(
      (trays) => {
        const top = [...document.querySelectorAll<HTMLElement>(trays)].pop();
        return top?.style.right === '0px' && top;
      },
      TRAYS,
      { timeout: SETTLE_MS },
    );
    await page.evaluate(() => RED.tray.close());
    await page.waitForFunction((element) => !(element as HTMLElement).isConnected, tray, { timeout: SETTLE_MS });
    await tray.dispose();
  }
  await dismissNotifications(page);
}
