// Which test files each `npm run test:*` script runs. Areas go by folder, so every test file has one; the
// unit suite is named file by file: a test joins it only by being listed here, and the unit guard
// (unit-guard.ts) fails it there if it starts a process, a server, a browser or a connection.
import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** The checkout's root (this file runs from dist/test/suites/). */
export const ROOT = join(__dirname, '..', '..', '..');

/** Tests that start no process, server, browser or Redis: contract, DSP, limiter and poller logic. */
export const UNIT_TESTS: readonly string[] = [
  'test/audio/ebu-conformance.test.ts',
  'test/bench/dnsmos.test.ts',
  'test/bench/real-recordings.test.ts',
  'test/bench/segmental-si-sdr.test.ts',
  'test/bench/soak-accounting.test.ts',
  'test/bench/stoi.test.ts',
  'test/client/content-disposition.test.ts',
  'test/client/final-name.test.ts',
  'test/client/outputs-fields.test.ts',
  'test/client/dereverb-fields.test.ts',
  'test/client/rate-limiter.test.ts',
  'test/client/settings-combinations.test.ts',
  'test/client/retry-decision.test.ts',
  'test/client/status-poller.test.ts',
  'test/cluster/outage-kinds.test.ts',
  'test/engine/cli-flags.test.ts',
  'test/engine/download-names.test.ts',
  'test/engine/ffmpeg-need.test.ts',
  'test/engine/job-fence.test.ts',
  'test/engine/part-headers.test.ts',
  'test/engine/storage-shape.test.ts',
  'test/docs/architecture.test.ts',
  'test/docs/doc-images.test.ts',
  'test/docs/links.test.ts',
  'test/editor/deploy-reasons.test.ts',
  'test/editor/editor-script.test.ts',
  'test/editor/live-page-audio.test.ts',
  'test/editor/sidebar-chart.test.ts',
  'test/editor/sidebar-render.test.ts',
  'test/enhance/denoiser.test.ts',
  'test/enhance/dereverb.test.ts',
  'test/enhance/energy-voice.test.ts',
  'test/enhance/filters.test.ts',
  'test/enhance/hum-detector.test.ts',
  'test/enhance/hum-subtractor.test.ts',
  'test/enhance/lark-warm-up.test.ts',
  'test/enhance/leveler.test.ts',
  'test/enhance/live-stream.test.ts',
  'test/enhance/resampler.test.ts',
  'test/enhance/sample-check.test.ts',
  'test/enhance/wait-estimate.test.ts',
  'test/examples/example-flows.test.ts',
  'test/lint.test.ts',
  'test/node-red-5/pinned.test.ts',
  'test/nodes/output-list.test.ts',
  'test/nodes/resumed-join.test.ts',
  'test/nodes/texts.test.ts',
  'test/sidebar/play-cache.test.ts',
  'test/sidebar/play-tickets.test.ts',
  'test/sidebar/registry.test.ts',
  'test/suites/lanes.test.ts',
  'test/suites/suites.test.ts',
];

/**
 * Files that must never run beside each other when a suite runs in lanes (lanes.ts): each group's files
 * run in one mocha process, one after another. Each of these starts a single-node Ceph (4 GB of memstore).
 */
export const SERIAL_GROUPS: readonly (readonly string[])[] = [
  ['test/cluster/redis-and-s3.test.ts', 'test/storage/s3-leftovers.test.ts', 'test/storage/s3-storage.test.ts'],
];

/**
 * Files whose claim hangs on the machine's pace, run in lanes with only light jobs beside them (lanes.ts):
 * the delay a person hears from the live microphone page (under 150 ms, in real time), and the progress
 * a processing media reports (its estimate of the time left, no long stretch without a report), which a
 * machine whose load changes midway misleads.
 */
export const ALONE_TESTS: readonly string[] = [
  'test/editor/live-microphone.test.ts',
  'test/engine/progress.test.ts',
  'test/engine/progress-trust.test.ts',
];

/** Each area's folders (and single files) under test/; `npm run test:<area>` runs the tests in them. */
export const AREAS: Readonly<Record<string, readonly string[]>> = {
  client: ['test/client'],
  engine: ['test/engine', 'test/enhance', 'test/audio'],
  nodes: ['test/nodes', 'test/sidebar', 'test/examples'],
  editor: ['test/editor'],
  cluster: ['test/cluster', 'test/storage'],
  docs: ['test/docs', 'test/readme.test.ts'],
  project: ['test/lint.test.ts', 'test/suites', 'test/node-red-5', 'test/start'],
  bench: ['test/bench'],
};

/** Every test file of the checkout's sources, as `test/…/x.test.ts`, sorted. */
export function allTests(root = ROOT): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.test.ts')) found.push(relative(root, path).split(sep).join('/'));
    }
  };
  walk(join(root, 'test'));
  return found.sort();
}

/** The area's test files: those under one of its folders, or named by it. */
export function areaTests(area: string, root = ROOT): string[] {
  const places = AREAS[area];
  if (!places) throw new Error(`no test area "${area}"; the areas are ${Object.keys(AREAS).join(', ')}`);
  return allTests(root).filter((file) => places.some((place) => file === place || file.startsWith(`${place}/`)));
}

/** Where tsc writes a test source: test/x.test.ts runs as dist/test/x.test.js. */
export function builtPath(source: string): string {
  return join('dist', source.replace(/\.ts$/, '.js'));
}
