// Part of npm run build: writes the editor's browser scripts into resources/, the folder Node-RED serves
// for this package: the nodes' editor script (src/editor/editor-script.ts) and the sidebar tab's script
// (src/editor/sidebar-script.ts, from the compiled src/editor/sidebar/).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EDITOR_SCRIPT_FILE, renderEditorScript } from '../src/editor/editor-script';
import { editorValues } from '../src/editor/editor-values';
import { bundleSidebarScript, SIDEBAR_SCRIPT_FILE } from '../src/editor/sidebar-script';

const resources = join(resolve(__dirname, '..', '..'), 'resources');
mkdirSync(resources, { recursive: true });
writeFileSync(join(resources, EDITOR_SCRIPT_FILE), renderEditorScript(editorValues()));
writeFileSync(
  join(resources, SIDEBAR_SCRIPT_FILE),
  bundleSidebarScript(join(__dirname, '..', 'src', 'editor', 'sidebar', 'browser-entry.js')),
);
