// Room impulse responses of a shoebox room by the image-source method (Allen and Berkley 1979): every
// reflection path is a mirror image of the source, heard after its distance / c with 1 / (4 pi distance)
// of spreading and the walls' reflection coefficient once per wall crossed. The walls are alike, their
// absorption set from the reverberation time asked for by Eyring's formula (image sources decay as it
// says); each image lands at its fractional delay through a Hann-windowed sinc (Peterson 1986) rather
// than the nearest sample. `reverberationTime` measures a response back (Schroeder's backward integral).

import { fft } from './quality-metrics';

const SPEED_OF_SOUND = 343;
/** Half the width of the fractional-delay sinc, in samples. */
const SINC_HALF = 16;

export interface Room {
  /** Width, depth, height (m). */
  size: [number, number, number];
  source: [number, number, number];
  microphone: [number, number, number];
  /** Reverberation time (s) the walls' absorption is chosen for. */
  rt60: number;
}

/** A bench's room: 6 x 4.5 x 3 m, the talker 2.2 m from the microphone (beyond the reverberation radius). */
export function benchRoom(rt60: number): Room {
  return { size: [6, 4.5, 3], source: [1.6, 2.0, 1.6], microphone: [3.7, 2.6, 1.3], rt60 };
}

/**
 * The walls' reflection coefficient (of pressure) that gives the room's reverberation time as measured
 * (T20): Eyring's to start, then corrected twice from the decay of a quick response (nearest-sample
 * images): a shoebox's image sources decay more slowly than Eyring says (axial and grazing paths cross
 * few walls), about 1.5 times in the bench's room. The decay rate goes with -ln(coefficient).
 */
export function calibratedReflection(room: Room, sampleRate: number): number {
  let beta = eyringReflection(room);
  for (let round = 0; round < 2; round++) {
    const quick = impulseSamples(room, sampleRate, 1.2 * room.rt60, beta, false);
    const measured = reverberationTime(quick, sampleRate);
    beta = Math.exp((Math.log(beta) * measured) / room.rt60);
  }
  return beta;
}

/** The walls' reflection coefficient (of pressure) for the room's reverberation time by Eyring's formula. */
export function eyringReflection(room: Room): number {
  const [x, y, z] = room.size;
  const volume = x * y * z;
  const surface = 2 * (x * y + x * z + y * z);
  const absorption = 1 - Math.exp((-0.161 * volume) / (surface * room.rt60));
  return Math.sqrt(1 - absorption);
}

export interface RoomImpulse {
  samples: Float32Array;
  /** Sample at which the direct sound arrives (its fractional delay rounded). */
  directAt: number;
}

/** The response from source to microphone, 1.2 times the reverberation time long (to about -72 dB). */
export function roomImpulse(room: Room, sampleRate: number): RoomImpulse {
  const beta = calibratedReflection(room, sampleRate);
  const direct = Math.hypot(...room.source.map((s, i) => s - room.microphone[i]));
  return {
    samples: impulseSamples(room, sampleRate, 1.2 * room.rt60, beta, true),
    directAt: Math.round((direct / SPEED_OF_SOUND) * sampleRate),
  };
}

function impulseSamples(
  room: Room,
  sampleRate: number,
  seconds: number,
  beta: number,
  fractional: boolean,
): Float32Array {
  const length = Math.ceil(seconds * sampleRate);
  const out = new Float64Array(length + 2 * SINC_HALF);
  const [lx, ly, lz] = room.size;
  const reach = (SPEED_OF_SOUND * length) / sampleRate;
  const orders = room.size.map((side) => Math.ceil(reach / (2 * side)) + 1);
  const sinc = new Float64Array(2 * SINC_HALF);
  for (let u = 0; u < 2; u++)
    for (let v = 0; v < 2; v++)
      for (let w = 0; w < 2; w++)
        for (let l = -orders[0]; l <= orders[0]; l++) {
          const dx = (1 - 2 * u) * room.source[0] + 2 * l * lx - room.microphone[0];
          for (let m = -orders[1]; m <= orders[1]; m++) {
            const dy = (1 - 2 * v) * room.source[1] + 2 * m * ly - room.microphone[1];
            for (let n = -orders[2]; n <= orders[2]; n++) {
              const dz = (1 - 2 * w) * room.source[2] + 2 * n * lz - room.microphone[2];
              const distance = Math.sqrt(dx * dx + dy * dy + dz * dz);
              const delay = (distance / SPEED_OF_SOUND) * sampleRate;
              if (delay >= length) continue;
              const crossings =
                Math.abs(l - u) + Math.abs(l) + Math.abs(m - v) + Math.abs(m) + Math.abs(n - w) + Math.abs(n);
              const gain = beta ** crossings / (4 * Math.PI * distance);
              if (fractional) addFractional(out, delay + SINC_HALF, gain, sinc);
              else out[Math.round(delay) + SINC_HALF] += gain;
            }
          }
        }
  return Float32Array.from(out.subarray(SINC_HALF, SINC_HALF + length));
}

/** `gain` at fractional position `at` of `out`, spread by a windowed sinc over SINC_HALF samples each side. */
function addFractional(out: Float64Array, at: number, gain: number, sinc: Float64Array): void {
  const whole = Math.floor(at);
  const fraction = at - whole;
  for (let k = -SINC_HALF + 1; k <= SINC_HALF; k++) {
    const x = k - fraction;
    const window = 0.5 + 0.5 * Math.cos((Math.PI * x) / SINC_HALF);
    const s = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
    sinc[k + SINC_HALF - 1] = window * s;
  }
  for (let k = -SINC_HALF + 1; k <= SINC_HALF; k++) {
    const i = whole + k;
    if (i >= 0 && i < out.length) out[i] += gain * sinc[k + SINC_HALF - 1];
  }
}

/** The response's direct sound and early reflections: up to `earlySeconds` after the direct sound. */
export function earlyPart(impulse: RoomImpulse, sampleRate: number, earlySeconds = 0.05): Float32Array {
  const end = Math.min(impulse.samples.length, impulse.directAt + Math.round(earlySeconds * sampleRate));
  const early = new Float32Array(impulse.samples.length);
  early.set(impulse.samples.subarray(0, end));
  return early;
}

/** Reverberation time (s) measured from a response: Schroeder's decay curve from -5 to -25 dB, times 3 (T20). */
export function reverberationTime(samples: Float32Array, sampleRate: number): number {
  const energy = new Float64Array(samples.length + 1);
  for (let i = samples.length - 1; i >= 0; i--) energy[i] = energy[i + 1] + samples[i] * samples[i];
  const db = (i: number) => 10 * Math.log10(energy[i] / energy[0]);
  let start = 0;
  while (start < samples.length && db(start) > -5) start++;
  let end = start;
  while (end < samples.length && db(end) > -25) end++;
  // Least-squares slope of the decay between the two points (dB per sample).
  let st = 0;
  let sd = 0;
  let stt = 0;
  let std = 0;
  const n = end - start;
  for (let i = start; i < end; i++) {
    const d = db(i);
    st += i;
    sd += d;
    stt += i * i;
    std += i * d;
  }
  const slope = (n * std - st * sd) / (n * stt - st * st);
  return -60 / slope / sampleRate;
}

/** `signal` convolved with `impulse`, cut to the signal's length (one FFT of both, padded). */
export function convolve(signal: Float32Array, impulse: Float32Array): Float32Array {
  let size = 1;
  while (size < signal.length + impulse.length) size *= 2;
  const ar = new Float64Array(size);
  const ai = new Float64Array(size);
  const br = new Float64Array(size);
  const bi = new Float64Array(size);
  ar.set(signal);
  br.set(impulse);
  fft(ar, ai);
  fft(br, bi);
  // The product, conjugated: a forward FFT of the conjugate is the inverse's conjugate, times the size.
  for (let k = 0; k < size; k++) {
    const r = ar[k] * br[k] - ai[k] * bi[k];
    const i = ar[k] * bi[k] + ai[k] * br[k];
    ar[k] = r;
    ai[k] = -i;
  }
  fft(ar, ai);
  return Float32Array.from({ length: signal.length }, (_, n) => ar[n] / size);
}
