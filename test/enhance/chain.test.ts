// The whole chain on files, as the engine runs it before loudness normalization.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LoudnessMeter } from '../../src/audio/loudness-meter';
import { enhanceWavFile, type EnhanceRun } from '../../src/enhance/chain';
import type { EnhanceOptions } from '../../src/enhance/chain-types';
import { runChannelTask, type ChannelTask } from '../../src/enhance/channel-task';
import { dfnModelState } from '../../src/enhance/dfn-model';
import { planFilters } from '../../src/enhance/filter-plan';
import { db, rms } from './speech-sample';
import { activeRms, hum, mix, readWav, speechAt, whiteNoise, writeFloatWav } from './test-media';

/** Segmental SNR (10 ms frames, each clamped to -10..35 dB, silent reference frames skipped), gain matched by least squares. */
function segmentalSnr(reference: Float32Array, output: Float32Array, sampleRate: number): number {
  let cross = 0;
  let power = 0;
  for (let i = 0; i < reference.length; i++) {
    cross += reference[i] * output[i];
    power += output[i] * output[i];
  }
  const gain = cross / power;
  const frame = sampleRate / 100;
  const loudest = Math.max(
    ...Array.from({ length: Math.floor(reference.length / frame) }, (_, k) =>
      rms(reference, k * frame, (k + 1) * frame),
    ),
  );
  let sum = 0;
  let count = 0;
  for (let at = 0; at + frame <= reference.length; at += frame) {
    const signal = rms(reference, at, at + frame);
    if (signal < loudest / 100) continue;
    let error = 0;
    for (let i = at; i < at + frame; i++) error += (reference[i] - gain * output[i]) ** 2;
    sum += Math.min(35, Math.max(-10, db(signal / Math.sqrt(error / frame + 1e-30))));
    count++;
  }
  return sum / count;
}

/**
 * Segmental SI-SDR: the mean over 0.5 s windows (those where the reference speaks) of the
 * scale-invariant signal-to-distortion ratio, so a slow gain (the leveler's) costs nothing.
 */
function segmentalSiSdr(reference: Float32Array, output: Float32Array, sampleRate: number): number {
  const window = sampleRate / 2;
  const loudest = Math.max(
    ...Array.from({ length: Math.floor(reference.length / window) }, (_, k) =>
      rms(reference, k * window, (k + 1) * window),
    ),
  );
  let sum = 0;
  let count = 0;
  for (let at = 0; at + window <= reference.length; at += window) {
    if (rms(reference, at, at + window) < loudest / 30) continue;
    let cross = 0;
    let power = 0;
    for (let i = at; i < at + window; i++) {
      cross += reference[i] * output[i];
      power += reference[i] * reference[i];
    }
    const scale = cross / power;
    let target = 0;
    let error = 0;
    for (let i = at; i < at + window; i++) {
      target += (scale * reference[i]) ** 2;
      error += (output[i] - scale * reference[i]) ** 2;
    }
    sum += 10 * Math.log10(target / error);
    count++;
  }
  return sum / count;
}

describe('enhance: the speech-enhancement chain on files', function () {
  this.timeout(120_000);
  let dir: string;
  let clean: Float32Array;
  const rate = 48_000;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'enhance-chain-'));
    clean = await speechAt(rate, dir);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function enhance(
    name: string,
    channels: Float32Array[],
    options: EnhanceOptions,
    run?: EnhanceRun,
    sampleRate = rate,
  ) {
    const input = join(dir, `${name}.wav`);
    const output = join(dir, `${name}.out.wav`);
    await writeFloatWav(input, sampleRate, channels);
    const report = await enhanceWavFile(input, output, options, run);
    return { report, output: (await readWav(output)).channels, sampleRate: (await readWav(output)).sampleRate };
  }

  /** Noise in the pauses of the clean sample (frames where it is silent), dBFS. */
  function pauseLevel(signal: Float32Array): number {
    const frame = rate / 100;
    let sum = 0;
    let count = 0;
    for (let at = 0; at + frame <= clean.length; at += frame) {
      if (rms(clean, at, at + frame) < 1e-4) {
        sum += rms(signal, at, at + frame) ** 2;
        count++;
      }
    }
    return 10 * Math.log10(sum / count);
  }

  it('noisy speech (white noise, 5 dB SNR): noise in pauses >= 15 dB lower, segmental SNR up >= 5 dB, reported', async () => {
    const noisy = mix(clean, whiteNoise(clean.length, 3), 5);
    const { output, report } = await enhance('noisy', [noisy], { model: 'FINCH', level: 100 });
    const { output: reference } = await enhance('clean-reference', [clean], {
      model: 'FINCH',
      level: 100,
      stages: { denoise: false },
    });
    const { output: unprocessed } = await enhance('noisy-reference', [noisy], {
      model: 'FINCH',
      level: 100,
      stages: { denoise: false },
    });
    const lowered = pauseLevel(unprocessed[0]) - pauseLevel(output[0]);
    assert.ok(lowered >= 15, `noise in pauses lowered by ${lowered.toFixed(1)} dB`);
    const gained = segmentalSnr(reference[0], output[0], rate) - segmentalSnr(reference[0], unprocessed[0], rate);
    assert.ok(gained >= 5, `segmental SNR improved by ${gained.toFixed(1)} dB`);
    assert.ok(report.noiseFloorReductionDb! > 10, `reported ${report.noiseFloorReductionDb} dB`);
    assert.deepEqual(report.stages, { denoise: true, highpass: true, leveler: false, humRemoval: false });
  });

  it('clean speech comes out nearly unchanged (segmental SNR >= 20 dB against the chain without noise reduction)', async () => {
    const { output } = await enhance('clean', [clean], { model: 'FINCH', level: 100 });
    const { output: reference } = await enhance('clean-reference', [clean], {
      model: 'FINCH',
      level: 100,
      stages: { denoise: false },
    });
    const snr = segmentalSnr(reference[0], output[0], rate);
    assert.ok(snr >= 20, `segmental SNR ${snr.toFixed(1)} dB`);
  });

  it('LARK_V2 (DeepFilterNet3) on noisy speech: noise in pauses >= 25 dB lower, segmental SI-SDR up >= 8 dB and more than FINCH', async () => {
    const noisy = mix(clean, whiteNoise(clean.length, 3), 5);
    const reference = (await enhance('ref', [clean], { model: 'FINCH', level: 100, stages: { denoise: false } }))
      .output;
    const unprocessed = (
      await enhance('noisy-ref', [noisy], { model: 'FINCH', level: 100, stages: { denoise: false } })
    ).output;
    const lark = await enhance('noisy-lark', [noisy], { model: 'LARK_V2', level: 100 });
    const finch = await enhance('noisy-finch', [noisy], { model: 'FINCH', level: 100 });
    const lowered = pauseLevel(unprocessed[0]) - pauseLevel(lark.output[0]);
    assert.ok(lowered >= 25, `noise in pauses lowered by ${lowered.toFixed(1)} dB`);
    const before = segmentalSiSdr(reference[0], unprocessed[0], rate);
    const larkGain = segmentalSiSdr(reference[0], lark.output[0], rate) - before;
    const finchGain = segmentalSiSdr(reference[0], finch.output[0], rate) - before;
    assert.ok(
      larkGain >= 8 && larkGain > finchGain,
      `segmental SI-SDR up ${larkGain.toFixed(1)} dB (FINCH ${finchGain.toFixed(1)} dB)`,
    );
    assert.equal(lark.report.noiseReducer, 'DeepFilterNet3');
    assert.equal(finch.report.noiseReducer, 'RNNoise');
  });

  it('clean speech through LARK_V2 is kept: segmental SI-SDR >= 30 dB against the same high-pass alone', async () => {
    const { output } = await enhance('clean-lark', [clean], { model: 'LARK_V2', level: 100 });
    const { output: reference } = await enhance('clean-hp', [clean], {
      model: 'LARK_V2',
      level: 100,
      stages: { denoise: false, leveler: false },
    });
    const sdr = segmentalSiSdr(reference[0], output[0], rate);
    assert.ok(sdr >= 30, `segmental SI-SDR ${sdr.toFixed(1)} dB`);
  });

  it('a stereo file of one signal twice is denoised once (LARK): both channels are the mono result', async () => {
    const short = mix(clean.subarray(0, rate * 3), whiteNoise(rate * 3, 8), 5);
    const mono = await enhance('twin-mono', [short], { model: 'LARK', level: 100 });
    const twin = await enhance('twin-stereo', [short, short], { model: 'LARK', level: 100 }, { threads: 2 });
    assert.equal(twin.report.twinChannels, true);
    assert.equal(twin.report.threads, 1, 'one channel processed');
    assert.deepEqual(twin.output[0], mono.output[0]);
    assert.deepEqual(twin.output[1], mono.output[0]);
    const apart = await enhance('not-twins', [short, short.map((s) => 0.5 * s)], { model: 'LARK', level: 100 });
    assert.equal(apart.report.twinChannels, false, 'different channels are each processed');
  });

  it('quiet speech (-73 dBFS RMS) through LARK is kept, not taken for noise: raised for the network and lowered after', async () => {
    const quiet = clean.map((s) => s * 0.01);
    const { output, report } = await enhance('quiet', [quiet], {
      model: 'LARK',
      level: 100,
      stages: { leveler: false },
    });
    const kept = db(rms(output[0]) / rms(quiet));
    assert.ok(kept > -3, `the speech came out ${kept.toFixed(1)} dB from its level`);
    assert.ok(report.noiseFloorReductionDb !== null);
  });

  it('two speakers 12 dB apart (LARK) come out within 3 LU of each other; FINCH leaves them apart', async () => {
    // Alternating turns of the sample: odd turns 12 dB quieter, with a faint noise floor.
    const turn = clean.length;
    const speakers = new Float32Array(turn * 4);
    for (let t = 0; t < 4; t++)
      speakers.set(
        clean.map((s) => s * (t % 2 ? 0.25 : 1)),
        t * turn,
      );
    const floor = whiteNoise(speakers.length, 9).map((n) => n * 1e-4);
    const input = speakers.map((s, i) => s + floor[i]);
    const turnLoudness = (signal: Float32Array, t: number) => {
      const meter = new LoudnessMeter(rate, 1, 0);
      meter.add([signal.slice(t * turn, (t + 1) * turn)], turn);
      return meter.finish().integratedLufs;
    };
    const gap = (signal: Float32Array) => Math.abs(turnLoudness(signal, 2) - turnLoudness(signal, 3));
    assert.ok(gap(input) > 11);
    const lark = await enhance('speakers-lark', [input], { model: 'LARK', level: 100 });
    const finch = await enhance('speakers-finch', [input], { model: 'FINCH', level: 100 });
    assert.ok(gap(lark.output[0]) <= 3, `LARK leaves ${gap(lark.output[0]).toFixed(1)} LU between the speakers`);
    assert.ok(gap(finch.output[0]) > 10, `FINCH changed the gap to ${gap(finch.output[0]).toFixed(1)} LU`);
    assert.ok(lark.report.leveler!.maxGainDb > 3 && lark.report.leveler!.minGainDb < -3);
  });

  it('LARK_V2 finds 50 Hz hum and subtracts it: each harmonic >= 20 dB lower in its bin, the voice and what is left of the hum within -22 dB of the voice (the hum: -13 dB)', async () => {
    const humming = mix(clean, hum(clean.length, rate, 50), 10);
    // The hum stage alone (noise reduction and leveler off, so the chain is linear), against the clean
    // speech through the same high-pass: what differs is the hum left and what was taken of the voice.
    const linear = { model: 'LARK_V2', level: 100, stages: { denoise: false, leveler: false } } as const;
    const { report, output: outputs } = await enhance('hum-stage', [humming], linear);
    assert.equal(report.hum?.mainsHz, 50);
    assert.ok(Math.abs(report.hum.fundamentalHz! - 50) < 0.2);
    const [output] = outputs;
    assert.equal(output.length, humming.length);
    const [reference] = (
      await enhance('hum-reference', [clean], { ...linear, stages: { ...linear.stages, humRemoval: false } })
    ).output;
    const [humIn] = (await enhance('hum-in', [humming], { ...linear, stages: { ...linear.stages, humRemoval: false } }))
      .output;
    const left = output.map((v, i) => v - reference[i]);
    const added = humIn.map((v, i) => v - reference[i]);
    const toneLevel = (signal: Float32Array, frequency: number) => {
      let re = 0;
      let im = 0;
      for (let i = 0; i < signal.length; i++) {
        re += signal[i] * Math.cos((2 * Math.PI * frequency * i) / rate);
        im += signal[i] * Math.sin((2 * Math.PI * frequency * i) / rate);
      }
      return 10 * Math.log10(re * re + im * im);
    };
    // Each harmonic's bin over the whole file: the hum left, and the voice's own share of that bin taken with it.
    for (const harmonic of [100, 150, 200, 250]) {
      const lower = toneLevel(added, harmonic) - toneLevel(left, harmonic);
      assert.ok(lower >= 20, `${harmonic} Hz lowered by ${lower.toFixed(1)} dB`);
    }
    const kept = 20 * Math.log10(rms(left) / rms(reference));
    assert.ok(20 * Math.log10(rms(added) / rms(reference)) > -15);
    assert.ok(kept <= -22, `the voice and what is left of the hum differ from the voice by ${kept.toFixed(1)} dB`);
  });

  it('a stereo file whose channels differ runs on one thread as one batch of 2 (LARK_V2): each channel within -100 dB of its own run alone', async () => {
    const left = mix(clean, whiteNoise(clean.length, 11), 5);
    // Another signal, not a copy: the speech later and quieter, under other noise.
    const right = mix(
      clean.map((_, i) => 0.4 * (clean[i + 9000] ?? 0)),
      whiteNoise(clean.length, 12),
      10,
    );
    const input = join(dir, 'stereo-differ.wav');
    await writeFloatWav(input, rate, [left, right]);
    const task = (channels: number[], name: string): ChannelTask => ({
      inputPath: input,
      outputPath: join(dir, `stereo-differ.${name}.wav`),
      channels,
      filters: planFilters(true, null),
      wet: 1,
      reducer: 'DeepFilterNet3',
      capDb: Infinity,
    });
    const batchedBefore = dfnModelState().batchedRuns;
    const together = (await readWav((await runChannelTask(task([0, 1], 'both'))).outputPath)).channels;
    const batched = dfnModelState().batchedRuns - batchedBefore;
    // Every run of the network carried both channels: one per 100 frames of 10 ms, and the stream's end.
    assert.ok(batched >= Math.floor(clean.length / 480 / 100), `${batched} runs of the network carried both channels`);
    for (const c of [0, 1]) {
      const alone = (await readWav((await runChannelTask(task([c], `alone${c}`))).outputPath)).channels[0];
      assert.equal(together[c].length, alone.length);
      let error = 0;
      let energy = 0;
      for (let i = 0; i < alone.length; i++) {
        error += (together[c][i] - alone[i]) ** 2;
        energy += alone[i] ** 2;
      }
      const differenceDb = 10 * Math.log10(error / energy);
      assert.ok(differenceDb < -100, `channel ${c}: ${differenceDb.toFixed(1)} dB from its run alone`);
    }
    const otherDb = db(rms(together[0]) / rms(together[1]));
    assert.ok(Math.abs(otherDb) > 3, `the channels stayed apart: ${otherDb.toFixed(1)} dB`);
  });

  it('keeps a 44.1 kHz stereo file at 44.1 kHz, its length and channels, in step with the input; on one thread (LARK_V2 batches both channels) as on a thread per channel', async () => {
    const left = await speechAt(44_100, dir);
    const right = left.map((s, i) => 0.5 * (left[i + 2000] ?? 0));
    // Noise, and hum (so each channel's hum subtraction is in step too).
    const noisy = (speech: Float32Array, seed: number) =>
      mix(mix(speech, whiteNoise(left.length, seed), 10), hum(left.length, 44_100, 60), 15);
    const channels = [noisy(left, 4), noisy(right, 5)];
    const lent: ChannelTask[] = [];
    const lend = (task: ChannelTask) => (lent.push(task), runChannelTask(task));
    // Two threads to lend: DeepFilterNet3 keeps both channels on one, as one batch of its session.
    const one = await enhance(
      'stereo-one',
      channels,
      { model: 'LARK_V2', level: 80 },
      { threads: 2, runElsewhere: lend },
      44_100,
    );
    assert.equal(one.report.hum?.mainsHz, 60);
    assert.equal(lent.length, 0, 'nothing lent');
    assert.equal(one.report.threads, 1);
    const two = await enhance(
      'stereo-two',
      channels,
      { model: 'LARK_V2', level: 80 },
      { threads: 2, channelsPerThread: 1, runElsewhere: lend },
      44_100,
    );
    assert.equal(one.sampleRate, 44_100);
    assert.equal(one.output.length, 2);
    assert.equal(one.output[0].length, left.length);
    assert.equal(lent.length, 1, 'a thread per channel: the second channel went to the other thread');
    assert.equal(two.report.threads, 2);
    for (let c = 0; c < 2; c++) assert.deepEqual(two.output[c], one.output[c]);
    // In step: the enhanced left channel matches the input through the same filters best at lag 0 (the
    // high-pass's own phase is no misalignment; against the raw input DeepFilterNet3's output peaks
    // half a sample off, as the high-pass's phase weighs differently once the noise is gone).
    const filtered = (
      await enhance(
        'stereo-filtered',
        channels,
        { model: 'LARK_V2', level: 80, stages: { denoise: false, leveler: false } },
        { threads: 1 },
        44_100,
      )
    ).output[0];
    let best = -Infinity;
    let lag = NaN;
    for (let d = -50; d <= 50; d++) {
      let sum = 0;
      for (let i = 5000; i < 100_000; i++) sum += filtered[i] * one.output[0][i + d];
      if (sum > best) [best, lag] = [sum, d];
    }
    assert.equal(lag, 0);
    assert.ok(activeRms(one.output[1]) < activeRms(one.output[0]), 'channels kept in their places');
    assert.deepEqual(
      (await readdir(dir)).filter((name) => name.includes('.out.wav.')),
      [],
      'no work file left',
    );
  });
});
