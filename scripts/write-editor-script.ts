// Part of npm run build: writes the editor script (src/editor/editor-script.ts) into resources/, the
// folder Node-RED serves for this package.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EDITOR_SCRIPT_FILE, renderEditorScript } from '../src/editor/editor-script';
import { editorValues } from '../src/editor/editor-values';

const resources = join(resolve(__dirname, '..', '..'), 'resources');
mkdirSync(resources, { recursive: true });
writeFileSync(join(resources, EDITOR_SCRIPT_FILE), renderEditorScript(editorValues()));
