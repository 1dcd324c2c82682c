// The sidebar's loudness chart, drawn in Node from reports of known shape: the time axis a person reads
// for a short clip, a 90 s file and a two-hour recording; one vertex per second with a value and a gap for
// each silence; the target and the ceiling at the height the dB axis gives their levels.
import assert from 'node:assert/strict';
import { chartSvg } from '../../src/editor/sidebar/chart-svg';
import { loudnessChart, type LoudnessChart } from '../../src/editor/sidebar/loudness-chart';
import type { LoudnessReport, LoudnessTrack } from '../../src/editor/sidebar/shapes';
import { timeTicks } from '../../src/editor/sidebar/time-axis';

const SIZE = { width: 320, height: 180 };
const TEXTS = { title: 'chart', input: 'input', output: 'output', target: 'target -16 LUFS', peak: 'ceiling -1 dBTP' };

function track(shortTerm: (number | null)[]): LoudnessTrack {
  return {
    integrated_lufs: -20,
    true_peak_dbtp: -3,
    loudness_range_lu: 5,
    duration_s: shortTerm.length,
    short_term_lufs: shortTerm,
    true_peak_per_second_dbtp: shortTerm.map((level) => (level === null ? null : level + 10)),
  };
}

function report(input: (number | null)[], output: (number | null)[]): LoudnessReport {
  return {
    uid: 'a1b2c3d4e5f6',
    interval_s: 1,
    target_lufs: -16,
    true_peak_limit_dbtp: -1,
    input: track(input),
    output: track(output),
  };
}

/** The vertices of a path as drawn: [x, y] per M or L command, per subpath. */
function subpaths(d: string): [number, number][][] {
  return d
    .split('M')
    .filter(Boolean)
    .map((part) =>
      [...part.matchAll(/(?:^|L)(-?[\d.]+),(-?[\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])] as [number, number]),
    );
}

/** The height the chart's dB axis gives a level, from two of its labelled ticks. */
function yOfLevel(chart: LoudnessChart, level: number): number {
  const [a, b] = [chart.levelTicks[0], chart.levelTicks[chart.levelTicks.length - 1]];
  return a.y + ((level - a.level) / (b.level - a.level)) * (b.y - a.y);
}

const labels = (chart: LoudnessChart) => chart.timeTicks.map((tick) => tick.label);
/** Speech-like short-term loudness around `level`, one value a second. */
const speech = (seconds: number, level = -22): (number | null)[] =>
  Array.from({ length: seconds }, (_, i) => level + 3 * Math.sin(i / 4));

describe('sidebar: the loudness chart', () => {
  it('labels a 5 s clip every second, a 90 s file every 15 s (30 s when narrow), two hours every 30 min', () => {
    assert.deepEqual(labels(loudnessChart(report(speech(5), speech(5)), SIZE)), [
      '0:00',
      '0:01',
      '0:02',
      '0:03',
      '0:04',
      '0:05',
    ]);
    assert.deepEqual(labels(loudnessChart(report(speech(90), speech(90)), SIZE)), [
      '0:00',
      '0:15',
      '0:30',
      '0:45',
      '1:00',
      '1:15',
      '1:30',
    ]);
    assert.deepEqual(labels(loudnessChart(report(speech(90), speech(90)), { width: 200, height: 140 })), [
      '0:00',
      '0:30',
      '1:00',
      '1:30',
    ]);
    const twoHours = loudnessChart(report(speech(7200), speech(7200)), SIZE);
    assert.deepEqual(labels(twoHours), ['0:00:00', '0:30:00', '1:00:00', '1:30:00', '2:00:00']);
    // The ticks span the plot: the first at its left edge, the last at its right.
    assert.equal(twoHours.timeTicks[0].x, twoHours.plot.left);
    assert.equal(twoHours.timeTicks.at(-1)!.x, twoHours.plot.right);
  });

  it('never puts more time ticks than there is room for, nor one past the end, whatever the duration', () => {
    for (const seconds of [1, 3, 7, 45, 61, 299, 601, 3599, 3601, 5400, 10_000, 86_400]) {
      const ticks = timeTicks(seconds, 6);
      assert.ok(ticks.length >= 2 && ticks.length <= 6, `${seconds} s: ${ticks.length} ticks`);
      assert.equal(ticks[0].seconds, 0);
      assert.ok(ticks.at(-1)!.seconds <= Math.max(seconds, 1), `${seconds} s: no tick past the end`);
    }
  });

  it('draws one vertex per second with a value, for input and output, at that second', () => {
    const chart = loudnessChart(report(speech(60, -30), speech(60, -16)), SIZE);
    const [input, output] = chart.curves;
    assert.equal(input.track, 'input');
    assert.equal(output.track, 'output');
    for (const curve of chart.curves) {
      assert.equal(curve.points, 60);
      assert.equal(curve.segments, 1);
      const vertices = subpaths(curve.d).flat();
      assert.equal(vertices.length, 60);
      // Second i's value is the loudness of the 3 s ending at second i + 1: the last one at the end.
      assert.equal(vertices.at(-1)![0], chart.plot.right);
      assert.ok(Math.abs(vertices[0][0] - (chart.plot.left + (chart.plot.right - chart.plot.left) / 60)) < 0.1);
    }
    // The louder output is drawn higher (a smaller y) than the quieter input, second by second.
    const inputYs = subpaths(input.d).flat();
    subpaths(output.d)
      .flat()
      .forEach(([, y], i) => assert.ok(y < inputYs[i][1], `second ${i}`));
  });

  it('leaves a gap where a second is silent (null), and still shows a lone second as a dot', () => {
    const input = speech(30);
    for (const i of [10, 11, 12, 20, 22]) input[i] = null;
    const chart = loudnessChart(report(input, speech(30)), SIZE);
    const curve = chart.curves[0];
    assert.equal(curve.points, 25);
    assert.equal(curve.segments, 4); // seconds 0-9, 13-19, 21 (alone), 23-29
    const runs = subpaths(curve.d);
    assert.deepEqual(
      runs.map((run) => run.length),
      [10, 7, 1, 7],
    );
    assert.match(curve.d, /M[\d.]+,[\d.]+l0,0/, 'the lone second is a zero-length stroke (a dot with round caps)');
    // No vertex falls in the silent seconds 11..13 (values 10..12 end at seconds 11..13).
    const x = (second: number) => chart.plot.left + ((chart.plot.right - chart.plot.left) * second) / 30;
    for (const [vx] of runs.flat()) assert.ok(vx < x(10.5) || vx > x(13.5), `vertex at ${vx} inside the gap`);
  });

  it('draws the target and the ceiling at the heights their levels have on the dB axis', () => {
    const chart = loudnessChart(report(speech(60, -30), Array<number>(60).fill(-16)), SIZE);
    const [target, peak] = chart.lines;
    assert.deepEqual([target.line, target.level, peak.line, peak.level], ['target', -16, 'peak', -1]);
    assert.ok(Math.abs(target.y - yOfLevel(chart, -16)) < 0.1, `target at ${target.y}`);
    assert.ok(Math.abs(peak.y - yOfLevel(chart, -1)) < 0.1, `ceiling at ${peak.y}`);
    // An output held at the target runs along the target line.
    for (const [, y] of subpaths(chart.curves[1].d).flat()) assert.equal(y, target.y);
    // The axis holds everything drawn, with labelled round steps.
    const levels = chart.levelTicks.map((tick) => tick.level);
    assert.ok(levels[0] <= -33 && levels.at(-1)! >= -1, `axis ${levels.join(', ')}`);
    const steps = new Set(levels.slice(1).map((level, i) => level - levels[i]));
    assert.equal(steps.size, 1, 'one step between ticks');
    assert.ok([1, 2, 3, 5, 6, 10, 12, 20].includes([...steps][0]));
  });

  it('writes the SVG the sidebar shows: both curves, both lines, the legend and the axes', () => {
    const chart = loudnessChart(report(speech(90, -28), speech(90, -16)), SIZE);
    const svg = chartSvg(chart, TEXTS);
    assert.match(svg, /^<svg class="me-loudness-chart"[^>]* viewBox="0 0 320 180"/);
    assert.equal(svg.match(/<path class="me-curve me-curve-input" d="M/g)?.length, 1);
    assert.equal(svg.match(/<path class="me-curve me-curve-output" d="M/g)?.length, 1);
    const lineY = (name: string) =>
      Number(new RegExp(`<line class="me-${name}-line"[^>]* y1="([\\d.]+)"`).exec(svg)![1]);
    assert.equal(lineY('target'), chart.lines[0].y);
    assert.equal(lineY('peak'), chart.lines[1].y);
    for (const text of ['input', 'output', 'target -16 LUFS', 'ceiling -1 dBTP', '0:00', '1:30'])
      assert.ok(svg.includes(`>${text}</text>`), `the chart says "${text}"`);
    // Texts are escaped where they enter the markup.
    assert.ok(chartSvg(chart, { ...TEXTS, input: '<b>in</b>' }).includes('&#60;b&#62;in&#60;/b&#62;'));
  });
});
