// The form rows that several nodes' dialogs share, written once. A node's template names the rows it
// takes in a marker, <div data-media-enhance-rows="loudnessTarget truePeak"></div>, and
// MediaEnhanceEditor.writeRows (dialog.ts) puts them in its place when the node registers, before
// Node-RED first reads the template: the editor then fills, translates, checks and saves them exactly
// as rows written out in the .html. `{type}` stands for the node's type, which names its translations.
import type { EditorValues } from './editor-values';

/** Each shared row's markup, by the name a marker gives it. */
export type DialogRows = Record<string, string>;

/** A row as Node-RED's own dialogs lay it out: an icon and a label, then the field. */
function labelledRow(prop: string, icon: string, field: string, rowClass = 'form-row'): string {
  return `<div class="${rowClass}">
    <label for="node-input-${prop}"><i class="fa ${icon}"></i> <span data-i18n="{type}.label.${prop}"></span></label>
    ${field}
</div>`;
}

/**
 * A number field followed by its unit and range, "LUFS (-70 to -5)". With `shownDefault`, empty takes the
 * service's default, which the field shows as its placeholder.
 */
function numberRow(
  prop: string,
  icon: string,
  unit: string,
  bound: keyof EditorValues['bounds'],
  shownDefault?: string,
  /** A line under the field, from the node's `hint.<prop>` translation. */
  hintLine = false,
): string {
  const placeholder = shownDefault ? ` data-media-enhance-placeholder="${shownDefault}"` : '';
  const range = `<span data-media-enhance-range="${bound}"></span>`;
  const hint = unit ? `<span>${unit} ${range}</span>` : range;
  const line = hintLine
    ? `<div class="media-enhance-hint" style="margin: 4px 0 0 104px; font-size: 0.9em; opacity: 0.8;" data-i18n="{type}.hint.${prop}"></div>`
    : '';
  return labelledRow(
    prop,
    icon,
    `<input type="text" id="node-input-${prop}" style="width: 100px;"${placeholder}> ${hint}${line}`,
  );
}

/** A menu that the node's oneditprepare fills (MediaEnhanceEditor.fillChoices). */
function menuRow(prop: string, icon: string, width: string): string {
  return labelledRow(prop, icon, `<select id="node-input-${prop}" style="width: ${width};"></select>`);
}

/** Where a node writes its file, shown only while its output is a file. */
function toFileRow(prop: string, icon: string): string {
  const field = `<input type="text" id="node-input-${prop}" data-i18n="[placeholder]{type}.placeholder.${prop}">`;
  return labelledRow(prop, icon, field, 'form-row media-enhance-to-file');
}

/** A menu (filled by oneditprepare) shown only while the node's output is a file. */
function toFileMenuRow(prop: string, icon: string, width: string): string {
  const field = `<select id="node-input-${prop}" style="width: ${width};"></select>`;
  return labelledRow(prop, icon, field, 'form-row media-enhance-to-file');
}

function checkboxRow(prop: string): string {
  return `<div class="form-row">
    <label>&nbsp;</label>
    <input type="checkbox" id="node-input-${prop}" style="display: inline-block; width: auto; vertical-align: top;">
    <label for="node-input-${prop}" style="width: auto;" data-i18n="{type}.label.${prop}"></label>
</div>`;
}

/**
 * One of the config node's limits: empty takes the default, shown as the placeholder, or where there is
 * none, `whenNone` (a translation of the config node's) says what empty means.
 */
function limitRow(prop: string, defaults: EditorValues['defaults'], whenNone: string): string {
  const placeholder =
    prop in defaults
      ? `data-media-enhance-placeholder="${prop}"`
      : `data-i18n="[placeholder]{type}.placeholder.${whenNone}"`;
  return `<div class="form-row">
    <label for="node-config-input-${prop}" style="width: 50%;" data-i18n="{type}.label.${prop}"></label>
    <input type="text" id="node-config-input-${prop}" style="width: 30%;" ${placeholder}>
</div>`;
}

export function dialogRows(values: EditorValues): DialogRows {
  const { defaults } = values;
  return {
    // Enhance file, upload and enhance video: empty takes the service's default.
    loudnessTarget: numberRow('loudnessTarget', 'fa-volume-up', 'LUFS', 'loudnessTarget', 'loudnessTarget', true),
    truePeak: numberRow('truePeak', 'fa-signal', 'dBTP', 'truePeak', 'truePeak'),
    enhancementLevel: numberRow('enhancementLevel', 'fa-magic', '%', 'v2EnhancementLevel', 'v2EnhancementLevel'),
    // Enhance audio: the v1 request needs every setting, and takes the level as a fraction.
    v1LoudnessTarget: numberRow('loudnessTarget', 'fa-volume-up', 'LUFS', 'loudnessTarget', undefined, true),
    v1PeakLimit: numberRow('peakLimit', 'fa-signal', 'dBTP', 'truePeak'),
    v1EnhancementLevel: numberRow('enhancementLevel', 'fa-magic', '', 'v1EnhancementLevel'),
    model: menuRow('model', 'fa-cogs', '320px'),
    transcode: menuRow('transcode', 'fa-file-audio-o', '200px'),
    // Upload and enhance file: a lossy output's encoding (empty keeps the input's).
    bitrate: numberRow('bitrate', 'fa-tachometer', 'kbps', 'bitrateKbps'),
    bitrateMode: menuRow('bitrateMode', 'fa-exchange', '200px'),
    sampleRate: menuRow('sampleRate', 'fa-area-chart', '200px'),
    downmixMono: checkboxRow('downmixMono'),
    // Upload and enhance file: pauses longer than this shortened to it (empty: kept).
    trimPauses: numberRow('trimPauses', 'fa-scissors', 's', 'trimPausesS'),
    // Upload and enhance file: room echo taken away before noise reduction (the dereverb extension).
    dereverb: checkboxRow('dereverb'),
    folder: toFileRow('folder', 'fa-folder-o'),
    fileName: toFileRow('fileName', 'fa-file-o'),
    ifExists: toFileMenuRow('ifExists', 'fa-clone', '70%'),
    keepAcrossRestarts: checkboxRow('keepAcrossRestarts'),
    // A file given by path is read once unchanged for this long: empty is the default, 0 does not wait.
    settle: labelledRow(
      'settle',
      'fa-hourglass-half',
      `<input type="text" id="node-input-settle" style="width: 100px;" placeholder="${values.settleSeconds.default}"> <span data-i18n="{type}.hint.settle"></span>`,
    ),
    // Enhance file: an intro and an outro joined to the episode (paths; empty: none), and their crossfade.
    intro: labelledRow(
      'intro',
      'fa-step-backward',
      `<input type="text" id="node-input-intro" data-i18n="[placeholder]{type}.placeholder.intro">`,
    ),
    outro: labelledRow(
      'outro',
      'fa-step-forward',
      `<input type="text" id="node-input-outro" data-i18n="[placeholder]{type}.placeholder.outro">`,
    ),
    crossfade: labelledRow(
      'crossfade',
      'fa-random',
      `<input type="text" id="node-input-crossfade" style="width: 100px;" placeholder="0"> <span data-i18n="{type}.hint.crossfade"></span>`,
    ),
    attachLoudness: checkboxRow('attachLoudness'),
    limitUpload: limitRow('limitUpload', defaults, 'noLimit'),
    limitMetadata: limitRow('limitMetadata', defaults, 'noLimit'),
    limitDownload: limitRow('limitDownload', defaults, 'noLimit'),
    limitEnhanceAudio: limitRow('limitEnhanceAudio', defaults, 'noLimit'),
    limitEnhanceVideo: limitRow('limitEnhanceVideo', defaults, 'noLimit'),
    requestTimeout: limitRow('requestTimeout', defaults, 'noTimeout'),
    waitTimeout: limitRow('waitTimeout', defaults, 'noTimeout'),
  };
}
