// How soon a finished media reaches the flow: short clips through upload -> wait for completion in the
// real Node-RED runtime (node-red-node-test-helper), one after another, on the config node's built-in
// engine (status requests held until the state changes) and, as the reference, on an engine that offers
// only the interface's polling. The delay runs from the media's completion (its `updated_at`) to the wait
// node's message; it is set against the time the engine itself took (accepted to completed).
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { startEngine } from '../src/engine';
import { makeWav } from '../test/fixtures/media';
import {
  helper,
  initHelper,
  loadFlow,
  localConfig,
  nextInput,
  remoteConfig,
  stopHelper,
  TAB,
} from '../test/nodes/flow-helper';
import type { BenchReport } from './run';

const HELD_MEDIA = 50;
const POLLED_MEDIA = 10;
const CLIP = makeWav(0.3, 16_000);

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function flow(config: object): object[] {
  return [
    TAB,
    config,
    {
      id: 'upload',
      type: 'media-enhance-upload',
      z: 'tab',
      service: 'svc',
      loudnessTarget: '-16',
      truePeak: '-1',
      enhancementLevel: '100',
      model: 'FINCH',
      transcode: '',
      wires: [['wait']],
    },
    { id: 'wait', type: 'media-enhance-wait', z: 'tab', service: 'svc', timeout: '60', wires: [['out']] },
    { id: 'out', type: 'helper', z: 'tab' },
  ];
}

interface Timing {
  /** From completion (updated_at) to the wait node's message, ms. */
  delay: number;
  /** From accepted (inserted_at) to completed (updated_at), ms. */
  engine: number;
}

/** Sends `count` clips one after another through the loaded flow. */
async function sendClips(count: number): Promise<Timing[]> {
  const timings: Timing[] = [];
  for (let i = 0; i < count; i++) {
    const out = nextInput(helper.getNode('out'), 60_000);
    helper.getNode('upload').receive({ payload: CLIP, filename: `clip${i}.wav` });
    const msg = (await out) as { payload: { inserted_at: string; updated_at: string } };
    const arrived = Date.now();
    const completed = Date.parse(msg.payload.updated_at);
    timings.push({ delay: arrived - completed, engine: completed - Date.parse(msg.payload.inserted_at) });
  }
  return timings;
}

function rows(label: string, timings: Timing[]): string[][] {
  const delays = timings.map((t) => t.delay);
  const engine = timings.map((t) => t.engine);
  const row = (p: number) => [
    `${label}: delay p${p} (${timings.length} media)`,
    `${(percentile(delays, p) / 1000).toFixed(3)} s`,
    `${(percentile(engine, p) / 1000).toFixed(3)} s`,
    (percentile(delays, p) / percentile(engine, p)).toFixed(2),
  ];
  return [row(50), row(95)];
}

export async function run(): Promise<BenchReport> {
  const userDir = await initHelper({ workers: 1 });
  const remote = await startEngine({
    apiKeys: ['bench-key'],
    dataDir: join(userDir, 'remote-style'),
    workers: 1,
    onErrorLine: () => undefined,
  });
  try {
    await loadFlow(flow(localConfig()));
    await sendClips(2); // the workers' first start is not what is measured
    const held = await sendClips(HELD_MEDIA);
    await helper.unload();
    await loadFlow(flow(remoteConfig(remote.url)), { svc: { apiKey: 'bench-key' } });
    const polled = await sendClips(POLLED_MEDIA);
    const heldP95 = percentile(
      held.map((t) => t.delay),
      95,
    );
    return {
      title: 'Completion to message on the built-in engine (held status requests) and with interface polling',
      writtenAlone: true,
      table: [
        ['measure', 'completion to message', 'engine time (accepted to completed)', 'ratio', 'goal'],
        ...rows('built-in engine', held).map((r, i) => [
          ...r,
          i === 1 ? `p95 < 0.2 s: ${heldP95 < 200 ? 'met' : 'not met'}` : '',
        ]),
        ...rows('interface polling (reference)', polled).map((r) => [...r, '']),
      ],
      notes: [
        "Short clips (0.3 s of 16 kHz WAV, FINCH) through upload -> wait for completion in the Node-RED runtime, one after another; the delay runs from the media's updated_at (its completion) to the wait node's message.",
        'Reference: the same flow against an engine without the waiting-metadata extension, which the client polls every 3-5 s as the interface asks.',
      ],
    };
  } finally {
    await helper.unload().catch(() => undefined);
    await remote.close();
    await stopHelper();
    await fsp.rm(userDir, { recursive: true, force: true });
  }
}
