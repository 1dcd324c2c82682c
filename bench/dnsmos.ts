// DNSMOS P.835 (Microsoft, ICASSP 2022): a network's estimate of the P.835 listening-test ratings SIG
// (speech), BAK (background) and OVRL (overall), 1..5, from the audio alone. The model and its provenance
// are in bench/models/dnsmos/; it runs on onnxruntime-web's WebAssembly backend, one thread.
// The feeding follows DNS-Challenge's DNSMOS/dnsmos_local.py: 16 kHz samples, a short clip repeated
// (doubled) until it fills 9.01 s, windows of 9.01 s every 1 s, each window's raw outputs through fixed
// polynomials, the mean over the windows.
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';
import { resamplePoly } from './resample-poly';

export const DNSMOS_MODEL = join(__dirname, '..', '..', 'bench', 'models', 'dnsmos', 'sig_bak_ovr.onnx');
const RATE = 16_000;
const WINDOW = Math.trunc(9.01 * RATE);
const HOP = RATE;

export interface DnsmosScores {
  sig: number;
  bak: number;
  ovrl: number;
}

/** The P.835 fits from dnsmos_local.py (highest power first), raw network output -> rating. */
const FITS: Record<keyof DnsmosScores, [number, number, number]> = {
  sig: [-0.08397278, 1.22083953, 0.0052439],
  bak: [-0.13166888, 1.60915514, -0.39604546],
  ovrl: [-0.06766283, 1.11546468, 0.04602535],
};

const fit = ([a, b, c]: [number, number, number], x: number) => a * x * x + b * x + c;

export class Dnsmos {
  private constructor(private readonly session: ort.InferenceSession) {}

  static async load(modelPath = DNSMOS_MODEL): Promise<Dnsmos> {
    // One thread: the benchmark's other work (the chain under test) has the rest of the machine.
    ort.env.wasm.numThreads = 1;
    return new Dnsmos(await ort.InferenceSession.create(modelPath));
  }

  /** The clip's mean ratings; `samples` at `sampleRate` (resampled to 16 kHz here). */
  async score(samples: Float32Array, sampleRate: number): Promise<DnsmosScores> {
    if (samples.length === 0) throw new Error('DNSMOS: the clip is empty; it needs at least one sample');
    let audio = resamplePoly(samples, sampleRate, RATE);
    while (audio.length < WINDOW) {
      const doubled = new Float32Array(audio.length * 2);
      doubled.set(audio);
      doubled.set(audio, audio.length);
      audio = doubled;
    }
    const windows = Math.trunc(Math.floor(audio.length / RATE) - 9.01) + 1;
    const sum: DnsmosScores = { sig: 0, bak: 0, ovrl: 0 };
    let count = 0;
    for (let k = 0; k < windows; k++) {
      const window = audio.subarray(k * HOP, k * HOP + WINDOW);
      if (window.length < WINDOW) continue;
      const input = new ort.Tensor('float32', Float32Array.from(window), [1, WINDOW]);
      const outputs = await this.session.run({ [this.session.inputNames[0]]: input });
      const [sig, bak, ovrl] = outputs[this.session.outputNames[0]].data as Float32Array;
      sum.sig += fit(FITS.sig, sig);
      sum.bak += fit(FITS.bak, bak);
      sum.ovrl += fit(FITS.ovrl, ovrl);
      count++;
    }
    return { sig: sum.sig / count, bak: sum.bak / count, ovrl: sum.ovrl / count };
  }

  async release(): Promise<void> {
    await this.session.release();
  }
}
