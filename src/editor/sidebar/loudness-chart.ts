// The before/after loudness picture of one media: short-term loudness per second of the input and of the
// output, the target loudness and the true-peak ceiling as horizontal lines, on one dB axis (see
// level-axis.ts for why one), over a time axis a person reads (time-axis.ts). Pure: a report and a size
// in, the chart's geometry out; chart-svg.ts turns it into SVG markup.
import { levelAxis } from './level-axis';
import type { LoudnessReport, LoudnessTrack } from './shapes';
import { timeTickRoom, timeTicks } from './time-axis';

export interface ChartSize {
  width: number;
  height: number;
}

export type TrackName = 'input' | 'output';
export type LineName = 'target' | 'peak';

export interface ChartCurve {
  track: TrackName;
  /** SVG path data; each run of seconds with a value is one subpath, so a null (silence) is a gap. */
  d: string;
  /** Seconds with a value (the path's vertices). */
  points: number;
  /** Runs of consecutive seconds with a value. */
  segments: number;
}

export interface ChartLine {
  line: LineName;
  /** dB: LUFS for the target, dBTP for the ceiling. */
  level: number;
  y: number;
}

export interface LoudnessChart extends ChartSize {
  /** The plotting area inside the axes' labels. */
  plot: { left: number; top: number; right: number; bottom: number };
  durationS: number;
  curves: ChartCurve[];
  lines: ChartLine[];
  timeTicks: { x: number; label: string }[];
  levelTicks: { y: number; level: number }[];
}

/** Room for the legend above, the dB labels on the left, the time labels below. */
const MARGIN = { left: 30, right: 8, top: 20, bottom: 18 };
/** A dB label needs about this much height. */
const LEVEL_LABEL_PX = 22;

const round1 = (value: number) => Math.round(value * 10) / 10;

function finiteLevels(track: LoudnessTrack): number[] {
  return track.short_term_lufs.filter((level): level is number => level !== null);
}

export function loudnessChart(report: LoudnessReport, size: ChartSize): LoudnessChart {
  const plot = {
    left: MARGIN.left,
    top: MARGIN.top,
    right: size.width - MARGIN.right,
    bottom: size.height - MARGIN.bottom,
  };
  const plotWidth = plot.right - plot.left;
  const plotHeight = plot.bottom - plot.top;
  const durationS = Math.max(
    1,
    report.input.duration_s,
    report.output.duration_s,
    report.input.short_term_lufs.length,
    report.output.short_term_lufs.length,
  );
  const axis = levelAxis(
    [...finiteLevels(report.input), ...finiteLevels(report.output), report.target_lufs, report.true_peak_limit_dbtp],
    plotHeight / LEVEL_LABEL_PX + 1,
  );
  const x = (seconds: number) => round1(plot.left + (seconds / durationS) * plotWidth);
  const y = (level: number) => round1(plot.top + ((axis.max - level) / (axis.max - axis.min)) * plotHeight);

  const curve = (track: TrackName): ChartCurve => {
    let d = '';
    let points = 0;
    let segments = 0;
    let runLength = 0;
    const endRun = () => {
      // A lone second between silences still shows: a zero-length stroke with round caps is a dot.
      if (runLength === 1) d += 'l0,0';
      runLength = 0;
    };
    report[track].short_term_lufs.forEach((level, i) => {
      if (level === null) return endRun();
      // Second i's short-term loudness is that of the 3 s ending at second i + 1.
      const vertex = `${x(i + 1)},${y(level)}`;
      if (runLength === 0) {
        d += `${d ? ' ' : ''}M${vertex}`;
        segments++;
      } else d += `L${vertex}`;
      runLength++;
      points++;
    });
    endRun();
    return { track, d, points, segments };
  };

  return {
    width: size.width,
    height: size.height,
    plot,
    durationS,
    curves: [curve('input'), curve('output')],
    lines: [
      { line: 'target', level: report.target_lufs, y: y(report.target_lufs) },
      { line: 'peak', level: report.true_peak_limit_dbtp, y: y(report.true_peak_limit_dbtp) },
    ],
    timeTicks: timeTicks(durationS, timeTickRoom(durationS, plotWidth)).map((tick) => ({
      x: x(tick.seconds),
      label: tick.label,
    })),
    levelTicks: axis.ticks.map((level) => ({ y: y(level), level })),
  };
}
