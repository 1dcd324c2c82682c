// The detail view of one finished media: what the engine did, the loudness figures before and after,
// the chart when the service offers a loudness report (or why there is none), and the downloads.
import { chartSvg } from './chart-svg';
import { enhancementStages } from './enhancement-stages';
import { clockTime, decibels, duration, type Translate } from './format';
import { loudnessChart, type ChartSize } from './loudness-chart';
import { element, openTag } from './markup';
import type { ResultDetails, ResultRow } from './shapes';

interface Figures {
  integrated: number | null;
  truePeak: number | null;
  range: number | null;
}

const num = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** Before and after: from the loudness report when there is one, else from the media's metadata. */
function figures(detail: ResultDetails): { input: Figures; output: Figures } {
  const report = detail.loudness;
  if (report)
    return {
      input: {
        integrated: report.input.integrated_lufs,
        truePeak: report.input.true_peak_dbtp,
        range: report.input.loudness_range_lu,
      },
      output: {
        integrated: report.output.integrated_lufs,
        truePeak: report.output.true_peak_dbtp,
        range: report.output.loudness_range_lu,
      },
    };
  const params = detail.metadata?.enhancement_params ?? {};
  const row = detail.result.loudness;
  return {
    input: {
      integrated: num(params.input_loudness_lufs) ?? row?.input_lufs ?? null,
      truePeak: num(params.input_true_peak_dbtp),
      range: num(params.input_loudness_range_lu),
    },
    output: {
      integrated: num(params.output_loudness_lufs) ?? row?.output_lufs ?? null,
      truePeak: num(params.output_true_peak_dbtp) ?? row?.output_true_peak_dbtp ?? null,
      range: num(params.output_loudness_range_lu),
    },
  };
}

/** The target and ceiling the media was processed for. */
function aims(detail: ResultDetails): { target: number | null; ceiling: number | null } {
  const params = detail.metadata?.enhancement_params ?? {};
  return {
    target: detail.loudness?.target_lufs ?? num(params.loudness_target) ?? detail.result.loudness?.target_lufs ?? null,
    ceiling: detail.loudness?.true_peak_limit_dbtp ?? num(params.true_peak) ?? null,
  };
}

function figuresTable(t: Translate, detail: ResultDetails): string {
  const { input, output } = figures(detail);
  const row = (label: string, unit: string, a: number | null, b: number | null) =>
    `<tr>${element('td', {}, label)}${element('td', {}, `${decibels(a)} ${unit}`)}${element('td', {}, `${decibels(b)} ${unit}`)}</tr>`;
  const { target, ceiling } = aims(detail);
  return [
    '<table class="me-figures">',
    `<thead><tr><th></th>${element('th', {}, t('sidebar.detail.input'))}${element('th', {}, t('sidebar.detail.output'))}</tr></thead>`,
    '<tbody>',
    row(t('sidebar.detail.integrated'), 'LUFS', input.integrated, output.integrated),
    row(t('sidebar.detail.truePeak'), 'dBTP', input.truePeak, output.truePeak),
    row(t('sidebar.detail.range'), 'LU', input.range, output.range),
    '</tbody></table>',
    element(
      'div',
      { class: 'me-aims' },
      t('sidebar.detail.aims', { target: decibels(target), ceiling: decibels(ceiling) }),
    ),
  ].join('');
}

/** A media's file, as the interface names them: the original (PRE) or the ENHANCED one. */
export type PlayedStep = 'PRE' | 'ENHANCED';

export function fileUrl(uid: string, step: PlayedStep): string {
  return `media-enhance/media/${encodeURIComponent(uid)}/file?step=${step}`;
}

function downloads(t: Translate, result: ResultRow): string {
  if (result.uid === null) return '';
  const links = [
    openTag('a', { class: 'me-download-original', href: fileUrl(result.uid, 'PRE'), download: true }) +
      `<i class="fa fa-download"></i> ${element('span', {}, t('sidebar.detail.downloadOriginal'))}</a>`,
  ];
  if (result.outcome === 'done' || result.enhancedReady === true)
    links.push(
      openTag('a', { class: 'me-download-enhanced', href: fileUrl(result.uid, 'ENHANCED'), download: true }) +
        `<i class="fa fa-download"></i> ${element('span', {}, t('sidebar.detail.downloadEnhanced'))}</a>`,
    );
  return `<div class="me-downloads">${links.join('')}</div>`;
}

/** The route the editor's audio player streams a file from (Range requests answered, so it can seek). */
export function playUrl(uid: string, step: PlayedStep): string {
  return `media-enhance/media/${encodeURIComponent(uid)}/play?step=${step}`;
}

/** The files the player offers for a result: the original, and the enhanced file of a done media. */
export function playedSteps(result: ResultRow): PlayedStep[] {
  if (result.uid === null) return [];
  return result.outcome === 'done' ? ['PRE', 'ENHANCED'] : ['PRE'];
}

/**
 * The source the page gives a media element for one file: the play route with a ticket for that file
 * (a media element sends no header, so it cannot carry the user's token as the editor's requests do).
 */
export type MediaSource = (uid: string, step: PlayedStep) => string;

/**
 * An audio player for the original (A) and, for a done media, the enhanced file (B), one shown at a time:
 * the switch moves the other to the same moment, so the difference is heard at once. Neither loads until
 * it is played: opening a result fetches no file, and only the file played takes the editor's downloads.
 */
function player(t: Translate, result: ResultRow, source: MediaSource): string {
  if (result.uid === null) return '';
  const files = playedSteps(result).map((step): [PlayedStep, string, string] =>
    step === 'PRE'
      ? [step, 'me-play-original', t('sidebar.detail.playOriginal')]
      : [step, 'me-play-enhanced', t('sidebar.detail.playEnhanced')],
  );
  const shown = files[files.length - 1][0];
  return [
    '<div class="me-player">',
    element('h4', {}, t('sidebar.detail.listen')),
    files.length > 1
      ? [
          openTag('div', { class: 'me-ab', role: 'group', title: t('sidebar.detail.abSwitch') }),
          ...files.map(([step, name, label]) =>
            element(
              'button',
              {
                type: 'button',
                class: `red-ui-button red-ui-button-small me-ab-choice ${name}-choice`,
                'data-step': step,
                'aria-pressed': String(step === shown),
              },
              label,
            ),
          ),
          '</div>',
        ].join('')
      : '',
    ...files.map(
      ([step, name]) =>
        `${openTag('audio', {
          class: `me-audio ${name}`,
          'data-step': step,
          controls: true,
          preload: 'none',
          src: source(result.uid!, step),
          hidden: step !== shown,
        })}</audio>`,
    ),
    '</div>',
  ].join('');
}

function chartOrReason(t: Translate, detail: ResultDetails, size: ChartSize): string {
  const report = detail.loudness;
  if (detail.result.outcome === 'failed') return '';
  if (!detail.loudnessOffered || !report) return element('div', { class: 'me-no-chart' }, t('sidebar.detail.noChart'));
  const chart = loudnessChart(report, size);
  return chartSvg(chart, {
    title: t('sidebar.chart.title'),
    input: t('sidebar.chart.input'),
    output: t('sidebar.chart.output'),
    target: t('sidebar.chart.target', { level: decibels(report.target_lufs) }),
    peak: t('sidebar.chart.peak', { level: decibels(report.true_peak_limit_dbtp) }),
  });
}

export function renderDetail(
  t: Translate,
  detail: ResultDetails,
  chartSize: ChartSize,
  source: MediaSource = playUrl,
): string {
  const { result } = detail;
  const stages = enhancementStages(t, detail.metadata?.enhancement_params);
  return [
    openTag('div', { class: `me-detail me-result-${result.outcome}`, 'data-result-id': result.id }),
    '<div class="me-detail-head">',
    openTag('button', { type: 'button', class: 'red-ui-button red-ui-button-small me-detail-back' }),
    `<i class="fa fa-chevron-left"></i> ${element('span', {}, t('sidebar.detail.back'))}</button>`,
    element('span', { class: 'me-detail-title' }, result.fileName ?? result.uid ?? result.id),
    '</div>',
    element(
      'div',
      { class: 'me-detail-meta' },
      t('sidebar.detail.meta', {
        node: result.nodeName,
        uid: result.uid ?? '–',
        finished: clockTime(result.finishedAt),
        took: duration(result.finishedAt - result.startedAt),
      }),
    ),
    result.outcome === 'failed'
      ? element(
          'div',
          { class: 'me-error' },
          `${result.errorCode ?? ''}${result.errorCode ? ': ' : ''}${result.error ?? ''}`,
        )
      : '',
    stages.length > 0
      ? `${element('h4', {}, t('sidebar.detail.stages'))}<ul class="me-stages">${stages.map((line) => element('li', {}, line)).join('')}</ul>`
      : '',
    result.outcome === 'done' ? `${element('h4', {}, t('sidebar.detail.loudness'))}${figuresTable(t, detail)}` : '',
    chartOrReason(t, detail, chartSize),
    player(t, result, source),
    downloads(t, result),
    '</div>',
  ].join('');
}
