import assert from 'node:assert/strict';
import { Analysis, FFT_SIZE, HOP, STFT_DELAY, Synthesis, BINS } from '../../src/enhance/dfn-frames';
import { DF_BINS, ERB_BANDS, ERB_WIDTHS, FeatureExtractor } from '../../src/enhance/dfn-features';
import { DfnNetwork, dfnModelState, releaseDfnModel, type DfnOutputs } from '../../src/enhance/dfn-model';
import { DfnStream, PRIME_FRAMES, type DfnStreamOptions } from '../../src/enhance/dfn-stream';
import { nativeRuntime } from '../../src/enhance/onnx-runtimes';
import { runWholeGraphs } from '../../bench/dfn-blockwise/whole-graphs';
import { RealFft } from '../../src/enhance/real-fft';
import { bestLag, db, rms, seededNoise } from './speech-sample';
import { speechAt } from './test-media';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/** The ERB band widths DeepFilterNet3 was trained with (its libDF's erb_fb at 48 kHz, FFT 960, 32 bands). */
const TRAINED_WIDTHS = [
  2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 5, 5, 7, 7, 8, 10, 12, 13, 15, 18, 20, 24, 28, 31, 37, 42, 50, 56, 67,
];

/** The model's features from their definitions, frame by frame: ERB bands in dB less a running mean, / 40,
 *  and the lowest 96 bins over the square root of a running magnitude (both with alpha 0.99). */
class ReferenceFeatures {
  private readonly meanDb = TRAINED_WIDTHS.map((_, b) => -60 - (30 * b) / 31);
  private readonly meanMag = Array.from({ length: 96 }, (_, k) => 1e-3 - (9e-4 * k) / 95);

  /** One frame's spectrum (481 [re, im] bins) -> its ERB feature and its scaled low bins. */
  next(bins: number[][]): { erb: number[]; low: number[][] } {
    let bin = 0;
    const erb = TRAINED_WIDTHS.map((width, band) => {
      let power = 0;
      for (let j = 0; j < width; j++, bin++) power += bins[bin][0] ** 2 + bins[bin][1] ** 2;
      const level = 10 * Math.log10(power / width + 1e-10);
      this.meanDb[band] = 0.01 * level + 0.99 * this.meanDb[band];
      return (level - this.meanDb[band]) / 40;
    });
    const low = this.meanMag.map((mean, k) => {
      this.meanMag[k] = 0.01 * Math.hypot(bins[k][0], bins[k][1]) + 0.99 * mean;
      const scale = 1 / Math.sqrt(this.meanMag[k]);
      return [bins[k][0] * scale, bins[k][1] * scale];
    });
    return { erb, low };
  }
}

async function enhance(
  input: Float32Array,
  capDb = Infinity,
  options?: DfnStreamOptions,
  piece = 4800,
): Promise<Float32Array> {
  const stream = await DfnStream.create(capDb, options);
  const out = new Float32Array(input.length);
  let at = 0;
  try {
    for (let i = 0; i < input.length; i += piece) {
      const part = await stream.push(input.subarray(i, i + piece), Math.min(piece, input.length - i));
      out.set(part, at);
      at += part.length;
    }
    const tail = await stream.flush();
    out.set(tail, at);
    at += tail.length;
  } finally {
    stream.destroy();
  }
  assert.equal(at, input.length, 'as many samples out as in');
  return out;
}

/** Energy of a - b against the energy of b, dB. */
function differenceDb(a: Float32Array, b: Float32Array, from = 0, to = a.length): number {
  let diff = 0;
  let ref = 0;
  for (let i = from; i < to; i++) {
    diff += (a[i] - b[i]) ** 2;
    ref += b[i] ** 2;
  }
  return 10 * Math.log10(diff / ref);
}

let dir: string;
let speech48: Float32Array;

describe('enhance: DeepFilterNet3', function () {
  this.timeout(120_000);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'dfn-test-'));
    speech48 = await speechAt(48_000, dir);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('analysis then synthesis gives the input back, STFT_DELAY samples late, to float precision', async () => {
    const fft = await RealFft.create(FFT_SIZE);
    const analysis = new Analysis(fft);
    const synthesis = new Synthesis(fft);
    const noise = seededNoise(3);
    const input = Float32Array.from({ length: HOP * 50 }, () => 0.5 * noise());
    const output = new Float32Array(input.length);
    const spectrum = new Float32Array(2 * BINS);
    for (let k = 0; k < 50; k++) {
      analysis.push(input.subarray(k * HOP, (k + 1) * HOP), spectrum);
      synthesis.push(spectrum, output.subarray(k * HOP, (k + 1) * HOP));
    }
    fft.destroy();
    assert.equal(STFT_DELAY, 480);
    const late = output.subarray(STFT_DELAY);
    const early = input.subarray(0, late.length);
    const errorDb = differenceDb(late, early, HOP, late.length);
    assert.ok(errorDb < -100, `reconstruction error ${errorDb.toFixed(1)} dB`);
  });

  it('makes its features as defined: ERB bands in dB less a running mean / 40, low bins over a running magnitude', async () => {
    assert.deepEqual(ERB_WIDTHS, TRAINED_WIDTHS);
    // A chirp-like signal, its frames analysed here with a plain DFT and the model's definitions.
    const fft = await RealFft.create(FFT_SIZE);
    const analysis = new Analysis(fft);
    const features = new FeatureExtractor();
    const signal = Float64Array.from(
      { length: HOP * 6 },
      (_, n) => 0.3 * Math.sin(0.0003 * n * n) + 0.05 * Math.sin(n),
    );
    const reference = new ReferenceFeatures();
    const spectrum = new Float32Array(2 * BINS);
    const [erb, re, im] = [new Float32Array(ERB_BANDS), new Float32Array(DF_BINS), new Float32Array(DF_BINS)];
    for (let frame = 0; frame < 6; frame++) {
      analysis.push(Float32Array.from(signal.subarray(frame * HOP, (frame + 1) * HOP)), spectrum);
      features.push(spectrum, erb, re, im);
      // The reference: window (Vorbis) over the last 960 samples, DFT / 960.
      const x = (n: number) => {
        const i = frame * HOP - HOP + n;
        const w = Math.sin((Math.PI / 2) * Math.sin((Math.PI * (n + 0.5)) / 960) ** 2);
        return i < 0 ? 0 : signal[i] * w;
      };
      const bins = Array.from({ length: 481 }, (_, k) => {
        let a = 0;
        let b = 0;
        for (let n = 0; n < 960; n++) {
          a += x(n) * Math.cos((2 * Math.PI * k * n) / 960);
          b -= x(n) * Math.sin((2 * Math.PI * k * n) / 960);
        }
        return [a / 960, b / 960];
      });
      const expected = reference.next(bins);
      expected.erb.forEach((value, band) =>
        assert.ok(Math.abs(erb[band] - value) < 1e-4, `frame ${frame} band ${band}`),
      );
      expected.low.forEach(([er, ei], k) => {
        assert.ok(Math.abs(re[k] - er) < 1e-3 * (1 + Math.abs(er)), `re ${frame} ${k}`);
        assert.ok(Math.abs(im[k] - ei) < 1e-3 * (1 + Math.abs(ei)), `im ${frame} ${k}`);
      });
    }
    fft.destroy();
  });

  it("matches a reference made here from the definitions around the network's own outputs, to -50 dB", async () => {
    // 1 s of speech in noise, 100 hops, and 3 hops of zeros after it (the STFT's delay and the lookahead).
    const noise = seededNoise(21);
    const input = Float64Array.from(speech48.subarray(24_000, 72_000), (s) => s + 0.02 * noise());
    const hops = 103;
    const window = Float64Array.from({ length: 960 }, (_, n) =>
      Math.sin((Math.PI / 2) * Math.sin((Math.PI * (n + 0.5)) / 960) ** 2),
    );
    const cos = Float64Array.from({ length: 960 }, (_, n) => Math.cos((2 * Math.PI * n) / 960));
    const sin = Float64Array.from({ length: 960 }, (_, n) => Math.sin((2 * Math.PI * n) / 960));
    // Spectra: the last 960 samples windowed, DFT / 960.
    const spectra = Array.from({ length: hops }, (_, t) => {
      const x = Float64Array.from({ length: 960 }, (_, n) => (input[t * HOP - HOP + n] ?? 0) * window[n]);
      return Array.from({ length: 481 }, (_, k) => {
        let re = 0;
        let im = 0;
        for (let n = 0; n < 960; n++) {
          re += x[n] * cos[(k * n) % 960];
          im -= x[n] * sin[(k * n) % 960];
        }
        return [re / 960, im / 960];
      });
    });
    // Features, as defined (checked above), laid out as the network takes them.
    const erb = new Float32Array(hops * 32);
    const spec = new Float32Array(2 * hops * 96);
    // The running means first settle over the stream's first 2 s (here all of it), then make the features.
    const features = new ReferenceFeatures();
    spectra.slice(0, PRIME_FRAMES).forEach((bins) => features.next(bins));
    spectra.forEach((bins, t) => {
      const { erb: bands, low } = features.next(bins);
      erb.set(bands, t * 32);
      low.forEach(([re, im], k) => {
        spec[t * 96 + k] = re;
        spec[(hops + t) * 96 + k] = im;
      });
    });
    // The shipped graphs over the whole sequence at once.
    const { mask, coefs } = await runWholeGraphs(erb, spec, hops);
    // Spectrum t takes the network's outputs of frame t + 2: ERB gains on every bin, then the deep filter
    // (5 taps over frames t - 2 .. t + 2) on the lowest 96; inverse DFT, window, overlap-add.
    const output = new Float64Array(hops * HOP);
    for (let t = 0; t <= 100; t++) {
      const row = t + 2;
      const enhanced = spectra[t].map(([re, im], k) => {
        let band = 0;
        for (let edge = TRAINED_WIDTHS[0]; k >= edge; edge += TRAINED_WIDTHS[++band]);
        return [re * mask[row * 32 + band], im * mask[row * 32 + band]];
      });
      for (let k = 0; k < 96; k++) {
        let re = 0;
        let im = 0;
        for (let o = 0; o < 5; o++) {
          const [a, b] = spectra[t - 2 + o]?.[k] ?? [0, 0];
          const c = coefs[((row * 96 + k) * 5 + o) * 2];
          const d = coefs[((row * 96 + k) * 5 + o) * 2 + 1];
          re += a * c - b * d;
          im += a * d + b * c;
        }
        enhanced[k] = [re, im];
      }
      for (let n = 0; n < 960; n++) {
        let y = enhanced[0][0] + enhanced[480][0] * (n % 2 ? -1 : 1);
        for (let k = 1; k < 480; k++)
          y += 2 * (enhanced[k][0] * cos[(k * n) % 960] - enhanced[k][1] * sin[(k * n) % 960]);
        if (t * HOP - HOP + n >= 0) output[t * HOP - HOP + n] += y * window[n];
      }
    }
    const ours = await enhance(Float32Array.from(input));
    const reference = Float32Array.from(output.subarray(0, input.length));
    const errorDb = differenceDb(ours, reference);
    assert.ok(errorDb < -50, `our stream against the reference: ${errorDb.toFixed(1)} dB`);
  });

  it('gives noisy speech back with the noise lower, the speech kept, aligned to the sample', async () => {
    const noise = seededNoise(11);
    const level = rms(speech48);
    const noisy = speech48.map((s) => s + level * noise());
    const out = await enhance(noisy);
    const noiseIn = differenceDb(noisy, speech48);
    const noiseOut = differenceDb(out, speech48);
    assert.ok(
      noiseOut < noiseIn - 8,
      `error against the clean speech: ${noiseIn.toFixed(1)} dB in, ${noiseOut.toFixed(1)} dB out`,
    );
    // The first 2 s are enough to find a lag.
    assert.equal(
      bestLag(speech48.subarray(0, 96_000), out.subarray(0, 96_000), 960),
      0,
      'output sample n is input sample n',
    );
    const clean = await enhance(speech48);
    assert.ok(
      differenceDb(clean, speech48) < -20,
      `clean speech changed by ${differenceDb(clean, speech48).toFixed(1)} dB`,
    );
    assert.equal(bestLag(speech48.subarray(0, 96_000), clean.subarray(0, 96_000), 960), 0);
  });

  it('runs in chunks of 1, 7 and 100 frames exactly as the shipped graphs over the whole sequence, from the first frame', async () => {
    const frames = 260;
    const { erb, spec } = noiseFeatures(frames, 4);
    const whole = await runWholeGraphs(erb, spec, frames);
    for (const chunk of [1, 7, 100]) {
      const chunked = await runInChunks(await DfnNetwork.create('wasm'), erb, spec, frames, chunk);
      for (const output of ['mask', 'coefs', 'lsnr'] as const) {
        const errorDb = differenceDb(chunked[output], whole[output]);
        assert.ok(errorDb < -100, `chunks of ${chunk}, ${output}: ${errorDb.toFixed(1)} dB`);
      }
      // From the first frame: the first 7 frames alone, no warm-up to hide behind.
      const firstErrorDb = differenceDb(chunked.mask.subarray(0, 7 * ERB_BANDS), whole.mask.subarray(0, 7 * ERB_BANDS));
      assert.ok(firstErrorDb < -100, `chunks of ${chunk}, first 7 frames: ${firstErrorDb.toFixed(1)} dB`);
    }
  });

  it('gives the same audio whatever the chunk: a stream in chunks of 7 against one in chunks of 100', async () => {
    const noise = seededNoise(5);
    const noisy = speech48.subarray(0, 48_000 * 4).map((s) => s + 0.02 * noise());
    const small = await enhance(noisy, Infinity, { chunk: 7, runtime: 'wasm' });
    const large = await enhance(noisy, Infinity, { chunk: 100, runtime: 'wasm' });
    const errorDb = differenceDb(small, large);
    assert.ok(errorDb < -100, `chunks of 7 against 100: ${errorDb.toFixed(1)} dB`);
  });

  for (const runtime of ['wasm', 'native'] as const)
    it(`runs signals asked for together as one batch, each exactly as alone (${runtime})`, async function () {
      if (runtime === 'native' && !nativeRuntime().available) this.skip();
      const frames = 24;
      const signals = [3, 4, 5].map((seed) => noiseFeatures(frames, seed));
      const alone: DfnOutputs[] = [];
      for (const { erb, spec } of signals)
        alone.push(await runInChunks(await DfnNetwork.create(runtime), erb, spec, frames, 2));
      const before = dfnModelState().largestBatch;
      const networks = await Promise.all(signals.map(() => DfnNetwork.create(runtime)));
      // Asked for in the same turn, as the streams of one thread ask: one run of 3 signals at each step.
      const together = await Promise.all(
        signals.map(({ erb, spec }, s) => runInChunks(networks[s], erb, spec, frames, 2)),
      );
      assert.ok(dfnModelState().largestBatch >= 3, `largest batch ${dfnModelState().largestBatch} (was ${before})`);
      for (let s = 0; s < signals.length; s++)
        for (const output of ['mask', 'coefs', 'lsnr'] as const)
          assert.ok(
            together[s][output].every((value, i) => value === alone[s][output][i]),
            `signal ${s}, ${output}: not the same as alone`,
          );
      // One network asked twice at once: its second run takes the state its first leaves.
      const network = await DfnNetwork.create(runtime);
      const { erb, spec } = signals[0];
      const two = (first: number) => {
        const part = new Float32Array(4 * DF_BINS);
        part.set(spec.subarray(first * DF_BINS, (first + 2) * DF_BINS));
        part.set(spec.subarray((frames + first) * DF_BINS, (frames + first + 2) * DF_BINS), 2 * DF_BINS);
        return network.run(erb.slice(first * ERB_BANDS, (first + 2) * ERB_BANDS), part, 2);
      };
      const [, second] = await Promise.all([two(0), two(2)]);
      assert.deepEqual(second.mask, alone[0].mask.subarray(2 * ERB_BANDS, 4 * ERB_BANDS));
    });

  it('gives the same outputs on the native runtime as on WebAssembly, within -60 dB', async function () {
    const native = nativeRuntime();
    if (!native.available) this.skip(); // onnxruntime-node is a devDependency: CI installs it
    const frames = 150;
    const { erb, spec } = noiseFeatures(frames, 8);
    const network = await DfnNetwork.create('native');
    assert.equal(network.runtime, 'native');
    const onNative = await runInChunks(network, erb, spec, frames, 50);
    const onWasm = await runInChunks(await DfnNetwork.create('wasm'), erb, spec, frames, 50);
    for (const output of ['mask', 'coefs', 'lsnr'] as const) {
      const errorDb = differenceDb(onNative[output], onWasm[output]);
      assert.ok(errorDb < -60, `${output}: native against WebAssembly ${errorDb.toFixed(1)} dB`);
    }
    const audio = speech48.subarray(0, 48_000 * 3);
    const audioDb = differenceDb(
      await enhance(audio, Infinity, { runtime: 'native' }),
      await enhance(audio, Infinity, { runtime: 'wasm' }),
    );
    assert.ok(audioDb < -60, `audio: native against WebAssembly ${audioDb.toFixed(1)} dB`);
  });

  it("runs on WebAssembly, and says so, in a thread where onnxruntime-web was loaded first and keeps the 'cpu' backend", async function () {
    if (!nativeRuntime().available) this.skip();
    // A process of its own: this one loaded onnxruntime-node first. There, native sessions would run on
    // onnxruntime-web's backend and leave the outputs handed to them as they were: zeros.
    const frames = 20;
    const script = `
      require(${JSON.stringify(require.resolve('onnxruntime-web'))});
      const { DfnNetwork } = require(${JSON.stringify(require.resolve('../../src/enhance/dfn-model'))});
      DfnNetwork.create('auto').then(async (network) => {
        const outputs = await network.run(new Float32Array(${frames * ERB_BANDS}).fill(-0.3),
          new Float32Array(${2 * frames * DF_BINS}).fill(0.05), ${frames});
        console.log(JSON.stringify({ runtime: network.runtime, mask: Array.from(outputs.mask) }));
      });`;
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script]);
    const { runtime, mask } = JSON.parse(stdout) as { runtime: string; mask: number[] };
    assert.equal(runtime, 'wasm');
    assert.ok(
      mask.some((gain) => gain > 0),
      'the network wrote its mask',
    );
  });

  it('streams with flat memory: buffers made once, whatever the length', async () => {
    // Small chunks, so that a short signal crosses many of them.
    const stream = await DfnStream.create(Infinity, { chunk: 100 });
    const noise = seededNoise(13);
    const piece = Float32Array.from({ length: 48_000 }, () => 0.05 * noise());
    const held = () => (stream as unknown as { output: Float32Array }).output.length;
    try {
      for (let second = 0; second < 3; second++) await stream.push(piece, piece.length);
      const after3 = held();
      for (let second = 0; second < 9; second++) await stream.push(piece, piece.length);
      assert.equal(held(), after3, 'the output buffer holds one chunk, not the file');
      assert.ok(after3 <= 2 * 100 * HOP + 48_000, `output buffer ${after3} samples`);
    } finally {
      stream.destroy();
    }
  });

  it('caps the attenuation at the level asked: 6, 12 and 20 dB off a noise, more without a cap', async () => {
    const noise = seededNoise(9);
    const input = Float32Array.from({ length: 48_000 * 3 }, () => 0.05 * noise());
    const settled = (out: Float32Array) => db(rms(out, 48_000) / rms(input, 48_000));
    const free = -settled(await enhance(input));
    assert.ok(free > 30, `without a cap the noise goes down ${free.toFixed(1)} dB`);
    for (const cap of [6, 12, 20]) {
      const attenuation = -settled(await enhance(input, cap));
      assert.ok(Math.abs(attenuation - cap) < 1, `capped at ${cap} dB: down ${attenuation.toFixed(1)} dB`);
    }
  });

  it('makes the sessions once per thread, shares them between signals, and releases them', async () => {
    const erb = new Float32Array(10 * ERB_BANDS);
    const spec = new Float32Array(10 * 2 * DF_BINS);
    await (await DfnNetwork.create('wasm')).run(erb, spec, 10);
    const before = dfnModelState();
    assert.ok(before.loaded);
    const outputs = await (await DfnNetwork.create('wasm')).run(erb, spec, 10);
    assert.equal(outputs.mask.length, 10 * ERB_BANDS);
    assert.equal(outputs.coefs.length, 10 * DF_BINS * 10);
    assert.equal(outputs.lsnr.length, 10);
    assert.equal(dfnModelState().loads, before.loads, 'no new sessions for a second signal');
    await releaseDfnModel();
    assert.equal(dfnModelState().loaded, false);
    await (await DfnNetwork.create('wasm')).run(erb, spec, 10);
    assert.equal(dfnModelState().loads, before.loads + 1, 'made again after the release');
  });
});

/** Features of seeded noise, laid out as the network takes them (spec: re plane, then im plane). */
function noiseFeatures(frames: number, seed: number): { erb: Float32Array; spec: Float32Array } {
  const noise = seededNoise(seed);
  return {
    erb: Float32Array.from({ length: frames * ERB_BANDS }, () => 0.5 * noise()),
    spec: Float32Array.from({ length: 2 * frames * DF_BINS }, () => noise()),
  };
}

/** The network run on `frames` frames, `chunk` at a time, its outputs put end to end. */
async function runInChunks(
  network: DfnNetwork,
  erb: Float32Array,
  spec: Float32Array,
  frames: number,
  chunk: number,
): Promise<DfnOutputs> {
  const all = {
    frames,
    mask: new Float32Array(frames * ERB_BANDS),
    coefs: new Float32Array(frames * DF_BINS * 10),
    lsnr: new Float32Array(frames),
  };
  for (let first = 0; first < frames; first += chunk) {
    const n = Math.min(chunk, frames - first);
    const part = new Float32Array(2 * n * DF_BINS);
    part.set(spec.subarray(first * DF_BINS, (first + n) * DF_BINS));
    part.set(spec.subarray((frames + first) * DF_BINS, (frames + first + n) * DF_BINS), n * DF_BINS);
    const out = await network.run(erb.slice(first * ERB_BANDS, (first + n) * ERB_BANDS), part, n);
    all.mask.set(out.mask, first * ERB_BANDS);
    all.coefs.set(out.coefs, first * DF_BINS * 10);
    all.lsnr.set(out.lsnr, first);
  }
  return all;
}
