// `npm start` writes Node-RED's settings.js on its first start only: the README sends users there to
// tune the built-in engine, so an edit must survive the next start and take effect in it.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startProduct, type RunningProduct } from '../editor/product';

describe('npm start and a user-edited settings.js', function () {
  this.timeout(600_000);
  let userDir: string;
  let product: RunningProduct | undefined;

  before(async () => {
    userDir = await mkdtemp(join(tmpdir(), 'node-red-user-'));
  });

  afterEach(async () => {
    await product?.stop();
    product = undefined;
  });

  after(() => rm(userDir, { recursive: true, force: true }));

  it('keeps the edit on the next start, and Node-RED runs with it', async () => {
    product = await startProduct(userDir);
    assert.equal(await product.stop(), 0);
    const settingsPath = join(userDir, 'settings.js');
    const written = await readFile(settingsPath, 'utf8');
    // The edits the README suggests: an engine setting, and one whose effect a browser sees (the page title).
    const edited = written
      .replace('mediaEnhance: { engine: {', 'mediaEnhance: { engine: { workers: 1,')
      .replace('editorTheme: {', "editorTheme: { page: { title: 'Our studio' },");
    assert.notEqual(edited, written, 'the file has the lines the edit changes');
    await writeFile(settingsPath, edited);

    product = await startProduct(userDir);
    assert.equal(await readFile(settingsPath, 'utf8'), edited, 'settings.js is as the user left it');
    const page = await (await fetch(product.url)).text();
    assert.match(page, /<title>Our studio<\/title>/, 'Node-RED read the edited file');
    assert.doesNotMatch(product.output.join(''), /wrote .*settings\.js/, 'the second start wrote no settings');
  });

  it('moves a settings.js that an earlier version rewrote on each start aside, keeping it', async () => {
    const settingsPath = join(userDir, 'settings.js');
    const old = '// Made by npm start on each run: edit scripts/start.ts instead.\nmodule.exports = { uiPort: 1 };\n';
    await writeFile(settingsPath, old);
    product = await startProduct(userDir);
    assert.equal(await readFile(`${settingsPath}.old`, 'utf8'), old);
    assert.match(await readFile(settingsPath, 'utf8'), /never overwritten/);
  });
});
