// Filling a node's dialog from the editor script's values: its shared rows when the node registers, its
// menus and hints when it opens (oneditprepare). Runs in the browser like validators.ts: each function is copied into the editor script and uses only its
// parameters, `this` and the editor's jQuery.
import type { DialogRows } from './dialog-rows';
import type { EditorValues } from './editor-values';

/** The little of jQuery (the editor's `$`) these functions use. */
interface Selection {
  toArray(): object[];
  attr(name: string): string | undefined;
  attr(name: string, value: string): Selection;
  text(): string;
  text(text: string): Selection;
  val(value: unknown): Selection;
  prop(name: string, value: unknown): Selection;
  append(child: Selection): Selection;
}
declare const $: (selector: string | object) => Selection;

/**
 * Fills a <select> with one option per value, labelled by `label`, and selects the node's value: Node-RED
 * set the field before its options existed.
 */
export function fillChoices(
  selector: string,
  values: readonly string[],
  label: (value: string) => string,
  selected: unknown,
): void {
  const select = $(selector);
  for (const value of values) select.append($('<option></option>').val(value).text(label(value)));
  select.val(selected);
}

/** What Node-RED passes as `this` to oneditprepare: the node being edited. */
interface EditedNode {
  type: string;
  model?: unknown;
  transcode?: unknown;
  bitrateMode?: unknown;
  sampleRate?: unknown;
  /** The node's translation of a key of its own (<type>.<key>). */
  _(key: string): string;
}

/**
 * Fills the shared menus (dialog-rows.ts) of an enhancement dialog: the model, fullest first, and the
 * output format, "keep" first, labelled by the node's own translations; a dialog without one of them
 * has an empty selection there, which jQuery leaves alone. `serviceDefault` adds a last model choice
 * that leaves the model to the service. Called as MediaEnhanceEditor.fillEnhancementMenus(node, {...}).
 */
export function fillEnhancementMenus(
  this: EditorValues,
  node: EditedNode,
  { serviceDefault }: { serviceDefault: boolean },
): void {
  const models = serviceDefault ? this.menus.settingsModels.concat('') : this.menus.models;
  fillChoices(
    '#node-input-model',
    models,
    (model) => node._(`${node.type}.option.${model || 'serviceDefault'}`),
    node.model,
  );
  fillChoices(
    '#node-input-transcode',
    [''].concat(this.menus.transcodeKinds),
    (kind) => kind || node._(`${node.type}.option.keep`),
    node.transcode,
  );
  fillChoices(
    '#node-input-bitrateMode',
    [''].concat(this.menus.bitrateModes),
    (mode) => (mode ? node._(`${node.type}.option.${mode}`) : node._(`${node.type}.option.keepEncoding`)),
    node.bitrateMode,
  );
  fillChoices(
    '#node-input-sampleRate',
    [''].concat(this.menus.sampleRates),
    (rate) => (rate ? `${Number(rate) / 1000} kHz` : node._(`${node.type}.option.keepEncoding`)),
    node.sampleRate,
  );
}

/**
 * Shows a checkbox the node was saved without (a flow from before the setting existed, or an example
 * that leaves it out) as the runtime reads it: at the setting's default. Node-RED shows a missing value
 * as an unticked box, and Done would then save it turned off. Called as
 * MediaEnhanceEditor.showUnsavedDefaults(node) from oneditprepare.
 */
export function showUnsavedDefaults(node: {
  _def: { defaults: Record<string, { value: unknown }> };
  [prop: string]: unknown;
}): void {
  for (const [prop, setting] of Object.entries(node._def.defaults)) {
    if (node[prop] === undefined && typeof setting.value === 'boolean') {
      $(`#node-input-${prop}`).prop('checked', setting.value);
    }
  }
}

/**
 * Writes the bounds and defaults a dialog mentions: an element marked data-media-enhance-range="<bound>"
 * shows "(min to max)", an input marked data-media-enhance-placeholder="<default>" gets the default as its
 * placeholder. Called as MediaEnhanceEditor.showHints(), whose values are `this`.
 */
export function showHints(this: EditorValues): void {
  for (const element of $('[data-media-enhance-range]').toArray()) {
    const bounds = this.bounds[$(element).attr('data-media-enhance-range') as keyof EditorValues['bounds']];
    $(element).text(`(${bounds.min} to ${bounds.max})`);
  }
  for (const element of $('[data-media-enhance-placeholder]').toArray()) {
    $(element).attr('placeholder', this.defaults[$(element).attr('data-media-enhance-placeholder')!]);
  }
}

/**
 * The config node's limit fields say what empty means for the service chosen: the interface's limits
 * for a remote service, `noLimit` for the built-in engine, which has none unless they are set. Called as
 * MediaEnhanceEditor.showLimitPlaceholders(local, noLimit) when the service choice changes.
 */
export function showLimitPlaceholders(this: EditorValues, local: boolean, noLimit: string): void {
  for (const element of $('input[data-media-enhance-placeholder^="limit"]').toArray()) {
    const prop = $(element).attr('data-media-enhance-placeholder')!;
    $(element).attr('placeholder', local ? noLimit : this.defaults[prop]);
  }
}

/**
 * Puts the shared rows (dialog-rows.ts) in place of each marker in the node's template,
 * <div data-media-enhance-rows="<row> <row>..."></div>. Called as MediaEnhanceEditor.writeRows(type)
 * when the node registers: Node-RED puts a module's node files in the page whole before it runs their
 * scripts, so the template is there, and it reads the template only when a dialog opens (buildEditForm),
 * so it fills, translates, checks and saves these rows as the ones written out.
 */
export function writeRows(this: { rows: DialogRows }, type: string): void {
  const rows = this.rows;
  const template = $(`script[data-template-name="${type}"]`);
  const written = template.text().replace(/<div data-media-enhance-rows="([^"]*)"><\/div>/g, (_marker, names: string) =>
    names
      .split(' ')
      .map((name) => {
        if (!(name in rows)) throw new Error(`${type}: no shared dialog row named ${name}`);
        return rows[name].replace(/\{type\}/g, type);
      })
      .join('\n'),
  );
  template.text(written);
}

/** What labelSettings reads of a registered type (RED.nodes.getType): its settings and its translation. */
interface RegisteredType {
  defaults: Record<string, { label?: string }>;
  credentials?: Record<string, { label?: string }>;
  /** The type's translation of a key of its own catalog; the key itself when the catalog has none. */
  _(key: string): string;
}
/** What preselectService reads of a config node (RED.nodes.eachConfig). */
interface ConfigNodeSeen {
  id: string;
  type: string;
  /** The flow it is scoped to; none for a global config node. */
  z?: string;
}
declare const RED: {
  nodes: { getType(type: string): RegisteredType; eachConfig(visit: (config: ConfigNodeSeen) => void): void };
};

/**
 * A node dropped from the palette (its onadd) takes the one service it could use, as Node-RED's own
 * dialog selects a lone config node: without it the first Deploy warns "Service: missing configuration
 * node" though there is nothing to choose. With two or more the user chooses; a set service stays.
 * Called as MediaEnhanceEditor.preselectService(this) from each node's onadd.
 */
export function preselectService(node: { service?: unknown; z?: string }): void {
  if (node.service) return;
  const usable: string[] = [];
  RED.nodes.eachConfig((config) => {
    if (config.type === 'media-enhance-config' && (!config.z || config.z === node.z)) usable.push(config.id);
  });
  if (usable.length === 1) node.service = usable[0];
}

/**
 * Gives each setting of a registered node type the label its dialog shows (<type>.label.<prop> in the
 * node's catalog) as the setting's `label`, Node-RED's convention: Node-RED then passes it to the setting's
 * check (validators.ts), whose reason names the setting, and uses it in its own reasons ("Service:
 * missing configuration node"). Called as MediaEnhanceEditor.labelSettings(type) right after
 * RED.nodes.registerType: only a registered type translates from its own catalog.
 */
export function labelSettings(type: string): void {
  const def = RED.nodes.getType(type);
  for (const settings of [def.defaults, def.credentials || {}]) {
    for (const prop of Object.keys(settings)) {
      const key = `${type}.label.${prop}`;
      const label = def._(key);
      if (label && label !== key && settings[prop].label === undefined) settings[prop].label = label;
    }
  }
}

/**
 * Lets the palette's filter find a node by the words of `words` without showing them: Node-RED filters
 * on each entry's data-palette-label, which it sets to the label it shows, so the words are added to that
 * attribute only and the entry stays one or two lines tall. Called as
 * MediaEnhanceEditor.addPaletteSearchWords(type, words) from the type's onpaletteadd, which Node-RED
 * runs right after it has made the type's palette entry.
 */
export function addPaletteSearchWords(type: string, words: string): void {
  const entry = $(`.red-ui-palette-node[data-palette-type="${type}"]`);
  const label = entry.attr('data-palette-label');
  if (label !== undefined && words) entry.attr('data-palette-label', `${label} ${words}`);
}

/** The little of jQuery and its editableList widget that the output list uses (the editor's `$`). */
interface ListSelection {
  editableList(options: Record<string, unknown>): ListSelection;
  editableList(method: 'addItem', data: unknown): ListSelection;
  editableList(method: 'items'): ListSelection;
  each(visit: (this: object) => void): ListSelection;
  find(selector: string): ListSelection;
  append(child: ListSelection | string): ListSelection;
  appendTo(parent: ListSelection): ListSelection;
  val(): unknown;
  val(value: unknown): ListSelection;
  prop(name: string): unknown;
  prop(name: string, value: unknown): ListSelection;
  attr(name: string, value: string): ListSelection;
  text(text: string): ListSelection;
  css(name: string, value: string): ListSelection;
}
declare const jQuery: (selector: string | object) => ListSelection;

/** A further output's row as the dialog saves it: the request's members, and the node's own file-name pattern. */
interface OutputRow {
  name?: string;
  transcode?: string;
  bitrate_kbps?: string;
  bitrate_mode?: string;
  sample_rate_hz?: string;
  downmix_mono?: boolean;
  file_name?: string;
}

/**
 * Fills enhance file's list of further outputs (a Node-RED editableList, as the core nodes' lists are):
 * one row per saved output, each with a name, a format ("the input's" first), a bitrate, a mode, a
 * sample rate, mono, and a file-name pattern; rows can be added, removed and dragged. Called as
 * MediaEnhanceEditor.prepareOutputList(node) from oneditprepare; saveOutputList reads it back.
 */
export function prepareOutputList(this: EditorValues, node: EditedNode & { furtherOutputs?: unknown }): void {
  const say = (key: string) => node._(`${node.type}.${key}`);
  const menu = (choices: string[], label: (choice: string) => string, cls: string, width: string) => {
    const select = jQuery('<select></select>').attr('class', cls).css('width', width);
    for (const choice of choices) select.append(jQuery('<option></option>').val(choice).text(label(choice)));
    return select;
  };
  const field = (cls: string, width: string, placeholder: string) =>
    jQuery('<input type="text">').attr('class', cls).attr('placeholder', placeholder).css('width', width);
  jQuery('#node-input-furtherOutputs-container')
    .css('min-height', '100px')
    .css('min-width', '450px')
    .editableList({
      addButton: say('label.addOutput'),
      removable: true,
      sortable: true,
      addItem: (row: ListSelection, _index: number, data: OutputRow) => {
        const line = (cells: ListSelection[]) => {
          const div = jQuery('<div></div>').css('margin-bottom', '4px');
          for (const cell of cells) div.append(cell).append(' ');
          return div.appendTo(row);
        };
        line([
          field('media-enhance-output-name', '140px', say('placeholder.outputName')).val(data.name || ''),
          menu(
            [''].concat(this.menus.transcodeKinds),
            (kind) => kind || say('option.keep'),
            'media-enhance-output-transcode',
            '140px',
          ).val(data.transcode || ''),
          field('media-enhance-output-bitrate', '70px', 'kbps').val(data.bitrate_kbps || ''),
        ]);
        line([
          menu(
            [''].concat(this.menus.bitrateModes),
            (mode) => (mode ? say(`option.${mode}`) : say('option.keepEncoding')),
            'media-enhance-output-mode',
            '140px',
          ).val(data.bitrate_mode || ''),
          menu(
            [''].concat(this.menus.sampleRates),
            (rate) => (rate ? `${Number(rate) / 1000} kHz` : say('option.keepEncoding')),
            'media-enhance-output-rate',
            '140px',
          ).val(data.sample_rate_hz || ''),
          jQuery('<label></label>')
            .css('width', 'auto')
            .append(
              jQuery('<input type="checkbox">')
                .attr('class', 'media-enhance-output-mono')
                .css('width', 'auto')
                .prop('checked', data.downmix_mono === true),
            )
            .append(` ${say('label.outputMono')}`),
        ]);
        line([
          field('media-enhance-output-file', '300px', say('placeholder.outputFileName')).val(data.file_name || ''),
        ]);
      },
    });
  const saved = Array.isArray(node.furtherOutputs) ? (node.furtherOutputs as OutputRow[]) : [];
  for (const row of saved) jQuery('#node-input-furtherOutputs-container').editableList('addItem', row);
}

/**
 * The list's rows as the node saves them (empty fields kept empty: the service's default). Called as
 * MediaEnhanceEditor.saveOutputList(node) from oneditsave.
 */
export function saveOutputList(node: { furtherOutputs?: unknown }): void {
  const rows: OutputRow[] = [];
  jQuery('#node-input-furtherOutputs-container')
    .editableList('items')
    .each(function () {
      const row = jQuery(this);
      const text = (cls: string) => {
        const value = row.find(`.${cls}`).val();
        return typeof value === 'string' ? value.trim() : '';
      };
      rows.push({
        name: text('media-enhance-output-name'),
        transcode: text('media-enhance-output-transcode'),
        bitrate_kbps: text('media-enhance-output-bitrate'),
        bitrate_mode: text('media-enhance-output-mode'),
        sample_rate_hz: text('media-enhance-output-rate'),
        downmix_mono: row.find('.media-enhance-output-mono').prop('checked') === true,
        file_name: text('media-enhance-output-file'),
      });
    });
  node.furtherOutputs = rows;
}

/** The helpers the editor script offers, each as MediaEnhanceEditor.<its name>. */
export const DIALOG_HELPERS = [
  addPaletteSearchWords,
  fillChoices,
  fillEnhancementMenus,
  labelSettings,
  prepareOutputList,
  preselectService,
  saveOutputList,
  showHints,
  showLimitPlaceholders,
  showUnsavedDefaults,
  writeRows,
];
