// Filling a node's dialog from the editor script's values when it opens (oneditprepare). Runs in the
// browser like validators.ts: each function is copied into the editor script and uses only its
// parameters, `this` and the editor's jQuery.
import type { EditorValues } from './editor-values';

/** The little of jQuery (the editor's `$`) these functions use. */
interface Selection {
  toArray(): object[];
  attr(name: string): string | undefined;
  attr(name: string, value: string): Selection;
  text(text: string): Selection;
  val(value: unknown): Selection;
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

/** The helpers the editor script offers, each as MediaEnhanceEditor.<its name>. */
export const DIALOG_HELPERS = [fillChoices, showHints];
