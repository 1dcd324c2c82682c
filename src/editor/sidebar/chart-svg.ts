// The loudness chart (loudness-chart.ts) as SVG markup. Colours come from the tab's stylesheet through
// the class names (plugins/media-enhance-sidebar.html), so the chart follows the editor's theme.
import type { LoudnessChart } from './loudness-chart';
import { element, openTag } from './markup';

export interface ChartTexts {
  /** The SVG's accessible name. */
  title: string;
  input: string;
  output: string;
  /** The lines' labels, with their levels: "target -16 LUFS", "ceiling -1 dBTP". */
  target: string;
  peak: string;
}

const LEGEND_SWATCH = 14;

export function chartSvg(chart: LoudnessChart, texts: ChartTexts): string {
  const { plot } = chart;
  const parts: string[] = [
    openTag('svg', {
      class: 'me-loudness-chart',
      xmlns: 'http://www.w3.org/2000/svg',
      viewBox: `0 0 ${chart.width} ${chart.height}`,
      width: chart.width,
      height: chart.height,
      role: 'img',
      'aria-label': texts.title,
    }),
    element('title', {}, texts.title),
  ];
  for (const tick of chart.levelTicks) {
    parts.push(
      openTag('line', { class: 'me-grid', x1: plot.left, x2: plot.right, y1: tick.y, y2: tick.y }) + '</line>',
    );
    const label = `${tick.level}`;
    parts.push(
      element('text', { class: 'me-tick me-tick-level', x: plot.left - 3, y: tick.y + 3, 'text-anchor': 'end' }, label),
    );
  }
  for (const tick of chart.timeTicks) {
    parts.push(
      openTag('line', { class: 'me-tick-mark', x1: tick.x, x2: tick.x, y1: plot.bottom, y2: plot.bottom + 3 }) +
        '</line>',
    );
    // Centred under its mark; at the ends, kept inside the chart and clear of the dB labels.
    const anchor = tick.x <= plot.left ? 'start' : tick.x > plot.right - 20 ? 'end' : 'middle';
    parts.push(
      element(
        'text',
        { class: 'me-tick me-tick-time', x: tick.x, y: plot.bottom + 13, 'text-anchor': anchor },
        tick.label,
      ),
    );
  }
  parts.push(
    openTag('rect', {
      class: 'me-plot-frame',
      x: plot.left,
      y: plot.top,
      width: plot.right - plot.left,
      height: plot.bottom - plot.top,
    }) + '</rect>',
  );
  for (const curve of chart.curves)
    parts.push(openTag('path', { class: `me-curve me-curve-${curve.track}`, d: curve.d }) + '</path>');
  for (const line of chart.lines) {
    parts.push(
      openTag('line', { class: `me-${line.line}-line`, x1: plot.left, x2: plot.right, y1: line.y, y2: line.y }) +
        '</line>',
    );
    // Labelled where it runs, at the right end, just above the line.
    const label = line.line === 'target' ? texts.target : texts.peak;
    parts.push(
      element(
        'text',
        { class: `me-line-label me-${line.line}-label`, x: plot.right - 2, y: line.y - 3, 'text-anchor': 'end' },
        label,
      ),
    );
  }
  // The legend names the curves; the lines carry their own labels.
  let x = plot.left;
  for (const curve of chart.curves) {
    const name = curve.track === 'input' ? texts.input : texts.output;
    parts.push(
      openTag('line', {
        class: `me-legend-swatch me-curve-${curve.track}`,
        x1: x,
        x2: x + LEGEND_SWATCH,
        y1: 9,
        y2: 9,
      }) + '</line>',
    );
    parts.push(element('text', { class: 'me-legend-label', x: x + LEGEND_SWATCH + 4, y: 12 }, name));
    x += LEGEND_SWATCH + 12 + name.length * 7;
  }
  parts.push('</svg>');
  return parts.join('');
}
