// The loudness promise over a grid of targets (-5..-30 LUFS) and ceilings (0..-9 dBTP), on speech,
// music-like and noise signals, as a user checks it: each output measured by ffmpeg. The true peak stays
// under the ceiling, WAV and MP3 alike; a target said to be reached is within 0.1 LU; a target said to be
// out of reach is one the bound on limiting stopped.
import assert from 'node:assert/strict';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MAX_LIMITING_DB } from '../../src/audio/normalize';
import { processMedia } from '../../src/engine/processors/enhance-processor';
import type { ProcessSettings } from '../../src/engine/processors/processor';
import { musicLike, writeWavFile } from '../fixtures/audio';
import { ffmpegLoudness } from '../fixtures/ffmpeg';
import { loudnessReportOf } from '../fixtures/loudness-report';
import { SPEECH_SAMPLE } from '../enhance/speech-sample';
import { whiteNoise, writeFloatWav } from '../enhance/test-media';

/** ffmpeg's meter and ours may differ this much on a true peak (the brief's allowance for its own meter). */
const METER_TOLERANCE_DB = 0.1;
const ON_TARGET_LU = 0.1;

type Case = [target: number, ceiling: number, transcode?: 'MP3'];

interface Signal {
  name: string;
  file: string;
  model: Pick<ProcessSettings, 'enhancement_model' | 'enhancement_level'>;
  cases: Case[];
}

describe('engine: loudness targets and true-peak ceilings, swept and measured by ffmpeg', function () {
  this.timeout(120_000);
  let dir: string;
  const outcomes = new Map<string, { reached: number; unreached: number }>();

  const signals: Signal[] = [
    // The shipped speech sample (16 kHz, 16-bit) through the full chain, as the example flows send it.
    {
      name: 'speech',
      file: 'speech.wav',
      model: { enhancement_model: 'LARK_V2' },
      cases: [
        [-5, -1],
        [-9, -2],
        [-10, -3],
        [-16, -1],
        [-20, 0],
        [-23, -9],
        [-30, -4],
        [-5, -1, 'MP3'],
        [-16, -1, 'MP3'],
      ],
    },
    // Music and noise with the lightest enhancement: the loudness stage is what is under test.
    {
      name: 'music',
      file: 'music.wav',
      model: { enhancement_model: 'FINCH', enhancement_level: 1 },
      cases: [
        [-5, 0],
        [-8, -1],
        [-12, -6],
        [-14, -1],
        [-18, -3],
        [-24, -9],
        [-30, -2],
        [-8, -1, 'MP3'],
      ],
    },
    {
      name: 'noise',
      file: 'noise.wav',
      model: { enhancement_model: 'FINCH', enhancement_level: 1 },
      cases: [
        [-6, -1],
        [-10, -9],
        [-13, -3],
        [-16, -2],
        [-20, -6],
        [-26, 0],
        [-30, -5],
      ],
    },
  ];

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loudness-sweep-'));
    await copyFile(SPEECH_SAMPLE, join(dir, 'speech.wav'));
    await writeWavFile(
      join(dir, 'music.wav'),
      { sampleRate: 44_100, channels: 2, bits: 24 },
      8,
      musicLike(44_100, 2, 3, -24),
    );
    const noise = whiteNoise(48_000 * 8, 11).map((x) => x * 10 ** (-30 / 20) * Math.sqrt(3)); // -30 dBFS RMS
    await writeFloatWav(join(dir, 'noise.wav'), 48_000, [noise]);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  for (const signal of signals) {
    for (const [target, ceiling, transcode] of signal.cases) {
      it(`${signal.name} to ${target} LUFS under ${ceiling} dBTP${transcode ? `, as ${transcode}` : ''}`, async () => {
        const media = join(dir, `${signal.name}${target}${ceiling}${transcode ?? ''}`);
        await mkdir(media);
        await copyFile(join(dir, signal.file), join(media, 'input'));
        const settings: ProcessSettings = {
          loudness_target: target,
          true_peak: ceiling,
          ...signal.model,
          ...(transcode ? { transcode } : {}),
        };
        const result = await processMedia({
          inputPath: join(media, 'input'),
          outputPath: join(media, 'output'),
          input: { kind: 'audio', ext: 'wav', contentType: 'audio/wav' },
          settings,
        });
        const params = loudnessReportOf(result.params);
        const measured = await ffmpegLoudness(join(media, 'output'));
        if (process.env.SWEEP_LOG)
          console.log(
            `      ffmpeg ${measured.integratedLufs} LUFS ${measured.truePeakDbtp.toFixed(2)} dBTP, limiting ${params.limiter_reduction_db}, reached ${params.target_reached}`,
          );
        const said = `report ${JSON.stringify({ out: params.output_loudness_lufs, peak: params.output_true_peak_dbtp, limiting: params.limiter_reduction_db, reached: params.target_reached })}`;

        assert.ok(
          measured.truePeakDbtp <= ceiling + METER_TOLERANCE_DB,
          `ffmpeg reads ${measured.truePeakDbtp.toFixed(2)} dBTP over the ${ceiling} dBTP ceiling; ${said}`,
        );
        assert.ok(
          Math.abs(params.output_true_peak_dbtp - measured.truePeakDbtp) <= METER_TOLERANCE_DB,
          `the reported true peak is what ffmpeg reads (${measured.truePeakDbtp.toFixed(2)}); ${said}`,
        );
        assert.ok(
          Math.abs(params.output_loudness_lufs - measured.integratedLufs) <= 0.05,
          `the reported loudness is what ffmpeg reads (${measured.integratedLufs}); ${said}`,
        );
        // A lossy output may be limited further by the headroom measured for its encoder (docs/interface.md).
        const bound = DEFAULT_MAX_LIMITING_DB + (params.encoder_headroom_db ?? 0);
        assert.ok(params.limiter_reduction_db <= bound + 0.05, `the limiter stays within its bound; ${said}`);
        if (params.target_reached === true) {
          assert.ok(
            Math.abs(measured.integratedLufs - target) <= ON_TARGET_LU,
            `reached, and ffmpeg reads ${measured.integratedLufs} LUFS; ${said}`,
          );
        } else {
          assert.equal(params.target_reached, false);
          // Out of reach only because the limiter took all it may: short of the target, never past it.
          assert.ok(
            params.limiter_reduction_db >= DEFAULT_MAX_LIMITING_DB - 0.05,
            `unreached with limiting to spare; ${said}`,
          );
          assert.ok(
            measured.integratedLufs < target - ON_TARGET_LU,
            `unreached, yet ffmpeg reads ${measured.integratedLufs} LUFS; ${said}`,
          );
          assert.match(
            params.note ?? '',
            new RegExp(
              `^${target} LUFS is out of reach under the ${ceiling} dBTP limit with at most ${DEFAULT_MAX_LIMITING_DB} dB of limiting`,
            ),
          );
        }
        const tally = outcomes.get(signal.name) ?? { reached: 0, unreached: 0 };
        tally[params.target_reached ? 'reached' : 'unreached']++;
        outcomes.set(signal.name, tally);
      });
    }
  }

  it('covered targets reached and targets out of reach on every signal', () => {
    for (const signal of signals) {
      const tally = outcomes.get(signal.name);
      assert.ok(tally && tally.reached > 0 && tally.unreached > 0, `${signal.name}: ${JSON.stringify(tally)}`);
    }
  });
});
