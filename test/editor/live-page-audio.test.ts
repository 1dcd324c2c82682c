// The live microphone page's audio work, run in Node as the page's AudioWorklet runs it: the resampler
// (its anti-alias filter and its timing), the playout queue, and LiveVoice between a simulated microphone
// and a simulated flow that answers every chunk as enhance stream does (the same length, a fixed latency
// later), so that the delay the page shows can be held against the delay the samples really have.
import assert from 'node:assert/strict';
import { JitterBuffer } from '../../src/live-page/jitter-buffer';
import { LiveVoice, type FromVoice, type VoiceStats } from '../../src/live-page/live-voice';
import { SincResampler } from '../../src/live-page/sinc-resampler';
import { CHUNK_MS, CHUNK_SAMPLES, decodeChunk, LIVE_RATE } from '../../src/live-page/wire-format';
import { bestLag, db, rms, seededNoise } from '../enhance/speech-sample';

const QUANTUM = 128;

function tone(rate: number, seconds: number, hz: number, phase = 0.3): Float32Array {
  return Float32Array.from(
    { length: Math.round(rate * seconds) },
    (_, i) => 0.5 * Math.sin((2 * Math.PI * hz * i) / rate + phase),
  );
}

/** `input` through a resampler, pushed in uneven blocks as the worklet's quanta and the queue's pulls come. */
function resample(resampler: SincResampler, input: Float32Array): Float32Array {
  const out: number[] = [];
  const block = new Float32Array(512);
  for (let at = 0, n = 1; at < input.length; at += n, n = (n * 7 + 13) % 300) {
    resampler.push(input.subarray(at, at + n));
    for (let made = resampler.pull(block); made > 0; made = resampler.pull(block)) out.push(...block.subarray(0, made));
  }
  return Float32Array.from(out);
}

/** Level (dB) of `output` against what it should be, away from the start, where the filter meets silence. */
function errorDb(output: Float32Array, expected: Float32Array, skip: number): number {
  const length = Math.min(output.length, expected.length) - skip;
  const error = Float32Array.from({ length }, (_, i) => output[skip + i] - expected[skip + i]);
  return db(rms(error) / rms(expected, skip, skip + length));
}

describe('live page: the resampler', () => {
  for (const rate of [44_100, 48_000]) {
    it(`${rate} Hz -> 16 kHz keeps speech in step (no delay, no gain) and stops what would fold back`, () => {
      for (const hz of [300, 1000, 3500, 7000]) {
        const output = resample(new SincResampler(rate, LIVE_RATE), tone(rate, 1, hz));
        // Output sample j is the input at j * rate / 16000: the same tone computed at 16 kHz.
        const ideal = tone(LIVE_RATE, 1, hz);
        const error = errorDb(output, ideal, 400);
        assert.ok(error < -60, `${hz} Hz: ${error.toFixed(1)} dB from the ideal`);
      }
      // Above 8 kHz, a tone would fold back into the band as another one: it must be gone.
      for (const hz of [8000, 9000, 12_000, 20_000]) {
        const output = resample(new SincResampler(rate, LIVE_RATE), tone(rate, 1, hz));
        const left = db(rms(output, 400) / 0.5 / Math.SQRT1_2);
        assert.ok(left < -65, `${hz} Hz comes through at ${left.toFixed(1)} dB`);
      }
    });

    it(`16 kHz -> ${rate} Hz puts speech back in step, with no image above 8 kHz`, () => {
      for (const hz of [300, 2000, 7000]) {
        const output = resample(new SincResampler(LIVE_RATE, rate), tone(LIVE_RATE, 1, hz));
        const error = errorDb(output, tone(rate, 1, hz), 1000);
        assert.ok(error < -60, `${hz} Hz: ${error.toFixed(1)} dB from the ideal (images and errors)`);
      }
    });
  }

  for (const rate of [44_100, 48_000])
    it(`16 kHz -> ${rate} Hz: needed(n) is exactly what n more outputs need, block after block`, () => {
      const resampler = new SincResampler(LIVE_RATE, rate);
      const block = new Float32Array(QUANTUM);
      for (let i = 0; i < 5000; i++) {
        resampler.push(new Float32Array(resampler.needed(QUANTUM)));
        assert.equal(resampler.pull(block), QUANTUM, `block ${i}`);
      }
    });

  it('the same output however the input is cut', () => {
    const input = tone(LIVE_RATE, 0.5, 440);
    const whole = new SincResampler(LIVE_RATE, 48_000);
    whole.push(input);
    const once = new Float32Array(30_000);
    const made = whole.pull(once);
    const cut = resample(new SincResampler(LIVE_RATE, 48_000), input);
    assert.equal(cut.length, made);
    assert.ok(
      cut.every((v, i) => Math.abs(v - once[i]) < 1e-6),
      'cut in blocks = pushed at once',
    );
  });
});

describe('live page: the playout queue', () => {
  const chunk = 4;
  const make = () => new JitterBuffer({ chunk, margin: { start: 2, min: 1, max: 10 }, remember: 100, watch: 20 });
  const samples = (seq: number) => Float32Array.from({ length: chunk }, (_, i) => seq * 10 + i);
  const take = (queue: JitterBuffer, count: number, started: number[] = []) => {
    const out = new Float32Array(count);
    queue.take(out, (seq) => started.push(seq));
    return [...out];
  };

  it('plays the chunks in order once a chunk and the margin are in, whatever order they came in', () => {
    const queue = make();
    queue.put(0, samples(0));
    assert.deepEqual(take(queue, 4), [0, 0, 0, 0], 'one chunk is not yet a chunk and the margin');
    queue.put(1, samples(1));
    const started: number[] = [];
    assert.deepEqual(take(queue, 6, started), [0, 1, 2, 3, 10, 11]);
    queue.put(3, samples(3));
    queue.put(2, samples(2));
    assert.deepEqual(take(queue, 8, started), [12, 13, 20, 21, 22, 23, 30, 31]);
    assert.deepEqual(started, [0, 1, 2, 3]);
    assert.equal(queue.underruns, 0);
    assert.equal(queue.letGo, 0);
  });

  it("while playing, drops at a chunk's turn what came in a burst more than a chunk beyond two and the margin", () => {
    const queue = make();
    queue.put(0, samples(0));
    queue.put(1, samples(1));
    assert.deepEqual(take(queue, 2), [0, 1]);
    for (let seq = 2; seq < 8; seq++) queue.put(seq, samples(seq));
    const started: number[] = [];
    // At chunk 1's turn 28 wait, 14 or more are too many (two chunks, the margin and a chunk): the oldest
    // go until 12 are left (5, 6, 7).
    assert.deepEqual(take(queue, 10, started), [2, 3, 50, 51, 52, 53, 60, 61, 62, 63]);
    assert.deepEqual(started, [5, 6]);
    assert.equal(queue.letGo, 4 * chunk);
  });

  it('after a wait, drops what came in a burst beyond a chunk and the margin, oldest first', () => {
    const queue = make();
    for (let seq = 0; seq < 4; seq++) queue.put(seq, samples(seq));
    const started: number[] = [];
    assert.deepEqual(take(queue, 6, started), [20, 21, 22, 23, 30, 31], '16 queued, 6 needed: two chunks dropped');
    assert.deepEqual(started, [2, 3]);
    assert.equal(queue.letGo, 2 * chunk);
  });

  it('an underrun plays silence and waits for a chunk and the margin again', () => {
    const queue = make();
    queue.put(0, samples(0));
    queue.put(1, samples(1));
    assert.deepEqual(take(queue, 10), [0, 1, 2, 3, 10, 11, 12, 13, 0, 0]);
    assert.equal(queue.underruns, 1);
    queue.put(2, samples(2));
    assert.deepEqual(take(queue, 2), [0, 0], 'waits: 4 queued is not a chunk and the margin of 2');
    queue.put(3, samples(3));
    assert.deepEqual(take(queue, 5), [20, 21, 22, 23, 30]);
  });

  it('keeps a margin as wide as the round trips spread: a lone late one leaves it, late ones again and again widen it', () => {
    const queue = make();
    let seq = 0;
    const answer = (roundTrip: number) => queue.put(seq, samples(seq++), roundTrip);
    for (let k = 0; k < 60; k++) answer(10 + (k % 3));
    assert.equal(queue.margin, 1 + 1, 'the least, 1, over the spread from the median, 11, to the 99th percentile, 12');
    answer(40);
    for (let k = 0; k < 39; k++) answer(10 + (k % 3));
    assert.equal(queue.margin, 2, 'one late answer in a hundred is not its 99th percentile');
    for (let k = 0; k < 5; k++) answer(16);
    assert.equal(queue.margin, 1 + 16 - 11, 'five in a hundred are');
    for (let k = 0; k < 5; k++) answer(90);
    assert.equal(queue.margin, 10, 'at most the most');
  });

  it('a refused chunk plays as silence in its turn; one that comes after its turn is dropped as late', () => {
    const queue = make();
    queue.put(0, samples(0));
    queue.refuse(1);
    assert.deepEqual(take(queue, 4), [0, 1, 2, 3]);
    queue.put(2, samples(2));
    assert.deepEqual(take(queue, 8), [0, 0, 0, 0, 20, 21, 22, 23]);
    assert.equal(queue.underruns, 0);
    assert.equal(queue.lost, 1);
    queue.put(1, samples(1));
    assert.equal(queue.late, 1);
  });

  it('when it held too much all through a watch, lets that much go from the start of a quiet chunk, never a loud one', () => {
    const queue = make();
    const loud = (seq: number) => Float32Array.from({ length: chunk }, (_, i) => (i % 2 ? 1 : -1) * (seq + 1));
    const quiet = (seq: number) => Float32Array.from({ length: chunk }, () => seq / 1000);
    queue.put(0, loud(0));
    queue.put(1, loud(1));
    take(queue, 1);
    // Playing with a chunk more than it needs all along (7 to 11 queued, the margin 2): too much by 5.
    for (let seq = 2; seq < 8; seq++) {
      queue.put(seq, loud(seq));
      take(queue, 4);
    }
    assert.equal(queue.letGo, 0, 'nothing of a loud chunk');
    queue.put(8, quiet(8));
    queue.put(9, loud(9));
    // Chunk 6's end and chunk 7, then of the quiet chunk 8 as much as it can (all but its last sample), then chunk 9.
    assert.deepEqual(take(queue, 9), [7, -7, 7, -8, 8, -8, 8, Math.fround(0.008), -10]);
    assert.equal(queue.letGo, 3);
  });
});

/**
 * A microphone, LiveVoice, and a flow that answers each chunk as enhance stream does (`latency` samples of
 * silence first, then the chunk's samples through `clean`), `roundTrip` quanta later.
 */
function simulate(options: {
  rate: number;
  input: Float32Array;
  latency: number;
  roundTrip: (seq: number) => number;
  clean?: (samples: Float32Array) => Float32Array;
  original?: boolean;
  /** Render quanta the browser skips (too busy): the microphone's block is lost, and nothing plays. */
  skipped?: (block: number) => boolean;
}): { output: Float32Array; stats: VoiceStats[] } {
  const { rate, input } = options;
  const outbox: FromVoice[] = [];
  const voice = new LiveVoice(rate, (message) => outbox.push(message));
  voice.receive({ type: 'start' }, 0);
  if (options.original) voice.receive({ type: 'hear', what: 'original' }, 0);
  const output = new Float32Array(input.length);
  const flowQueue: number[] = new Array<number>(options.latency).fill(0);
  const due = new Map<number, ArrayBuffer[]>();
  const stats: VoiceStats[] = [];
  for (let block = 0; block * QUANTUM < input.length; block++) {
    const frame = block * QUANTUM;
    for (const bytes of due.get(block) ?? []) voice.receive({ type: 'answer', bytes }, frame);
    due.delete(block);
    if (options.skipped?.(block)) continue;
    voice.process(input.subarray(frame, frame + QUANTUM), output.subarray(frame, frame + QUANTUM), frame);
    for (const message of outbox.splice(0)) {
      if (message.type === 'stats') stats.push(message);
      if (message.type !== 'chunk') continue;
      const { seq, samples } = decodeChunk(message.bytes);
      flowQueue.push(...(options.clean ?? ((s: Float32Array) => s))(samples));
      const answer = new ArrayBuffer(8 + 2 * CHUNK_SAMPLES);
      const view = new DataView(answer);
      view.setUint32(0, seq, true);
      view.setFloat32(4, (options.latency * 1000) / LIVE_RATE, true);
      flowQueue.splice(0, CHUNK_SAMPLES).forEach((v, i) => view.setInt16(8 + 2 * i, Math.round(v * 32767), true));
      const at = block + 1 + options.roundTrip(seq);
      due.set(at, [...(due.get(at) ?? []), answer]);
    }
  }
  return { output, stats };
}

/** Speech-band content that is exactly band-limited: 30 tones from 150 Hz to 3.4 kHz, at 0.1 RMS in all. */
function speechBandTones(
  rate: number,
  seconds: number,
): { samples: Float32Array; delayed(from: number, length: number, delay: number): Float32Array } {
  const next = seededNoise(7);
  const tones = Array.from({ length: 30 }, (_, k) => ({
    omega: (2 * Math.PI * 150 * (3400 / 150) ** (k / 29)) / rate,
    phase: Math.PI * next(),
  }));
  const amplitude = 0.1 * Math.sqrt(2 / tones.length);
  const samples = Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) =>
    tones.reduce((sum, t) => sum + amplitude * Math.sin(t.omega * i + t.phase), 0),
  );
  /** Samples from..from+length of the tones `delay` samples later, a fraction of a sample too. */
  const delayed = (from: number, length: number, delay: number) => {
    const out = new Float32Array(length);
    for (const { omega, phase } of tones) {
      // sin(w(i - d) + p) = sin(wi + p) cos(wd) - cos(wi + p) sin(wd)
      const [c, s] = [amplitude * Math.cos(omega * delay), amplitude * Math.sin(omega * delay)];
      for (let i = 0; i < length; i++) {
        const angle = omega * (from + i) + phase;
        out[i] += Math.sin(angle) * c - Math.cos(angle) * s;
      }
    }
    return out;
  };
  return { samples, delayed };
}

/** The least of `f` over [low, high], where it has one minimum: golden-section search, to a thousandth. */
function minimum(f: (x: number) => number, low: number, high: number): { x: number; value: number } {
  const ratio = (Math.sqrt(5) - 1) / 2;
  let [a, b] = [low, high];
  let [c, d] = [b - ratio * (b - a), a + ratio * (b - a)];
  let [fc, fd] = [f(c), f(d)];
  while (b - a > 1e-3) {
    if (fc < fd) {
      [b, d, fd] = [d, c, fc];
      c = b - ratio * (b - a);
      fc = f(c);
    } else {
      [a, c, fc] = [c, d, fd];
      d = a + ratio * (b - a);
      fd = f(d);
    }
  }
  return fc < fd ? { x: c, value: fc } : { x: d, value: fd };
}

describe('live page: LiveVoice between a microphone and the flow', () => {
  const rate = 44_100;
  const input = speechBandTones(rate, 3).samples;
  const latency = (24 * LIVE_RATE) / 1000;
  const settled = (stats: VoiceStats[]) => stats.filter((s) => s.delayMs !== null).slice(4);

  for (const contextRate of [44_100, 48_000]) {
    it(`at ${contextRate} Hz, plays the answers back in step with the microphone, and the delay it shows is the samples' own`, () => {
      const microphone = speechBandTones(contextRate, 3.5);
      const { output, stats } = simulate({ rate: contextRate, input: microphone.samples, latency, roundTrip: () => 2 });
      // The third second: by then the queue has played off what it held beyond its margin at the start.
      const third = (signal: Float32Array) => signal.subarray(2 * contextRate, 3 * contextRate);
      const shown = settled(stats);
      assert.ok(shown.length > 4, 'figures while it plays');
      // The samples' own delay, to a fraction of a sample (it falls between two: at 44.1 kHz always, and
      // after the queue hurried): where the output best matches the tones computed that much earlier.
      const excerpt = microphone.samples.subarray(2 * contextRate, 2.1 * contextRate);
      const lag = bestLag(excerpt, output.subarray(2 * contextRate), Math.round(0.15 * contextRate));
      const { x: delay, value: error } = minimum(
        (d) => errorDb(third(output), microphone.delayed(2 * contextRate, contextRate, d), 0),
        lag - 1,
        lag + 1,
      );
      // The voice comes back whole: the input that much later, band-limited to 16 kHz's band.
      assert.ok(error < -40, `output against the input ${delay.toFixed(2)} samples earlier: ${error.toFixed(1)} dB`);
      const delayMs = (delay * 1000) / contextRate;
      for (const s of shown.slice(-4))
        assert.ok(
          Math.abs(s.delayMs! - delayMs) < 0.5,
          `shown ${s.delayMs!.toFixed(2)} ms, the samples' ${delayMs.toFixed(2)} ms`,
        );
      const parts = shown[shown.length - 1].parts!;
      assert.ok(Math.abs(parts.enhance - 24) < 1e-3, "the stream's latency");
      assert.ok(
        parts.chunk >= CHUNK_MS && parts.chunk < CHUNK_MS + 5,
        `a whole chunk and the filter: ${parts.chunk} ms`,
      );
      assert.equal(shown[shown.length - 1].underruns, 0);
    });
  }

  it("render quanta the browser skipped are no delay: the one shown is still the samples' own", () => {
    const rate = 48_000;
    const microphone = speechBandTones(rate, 3).samples;
    // A quantum lost now and then in the first second and a half, as a busy browser does.
    const { output, stats } = simulate({
      rate,
      input: microphone,
      latency,
      roundTrip: () => 2,
      skipped: (block) => block < 560 && block % 97 === 50,
    });
    const excerpt = microphone.subarray(2 * rate, 2.1 * rate);
    const lagMs = (bestLag(excerpt, output.subarray(2 * rate), Math.round(0.15 * rate)) * 1000) / rate;
    const shown = stats.slice(-3);
    for (const s of shown)
      assert.ok(
        Math.abs(s.delayMs! - lagMs) < 0.5,
        `shown ${s.delayMs!.toFixed(2)} ms, the samples' ${lagMs.toFixed(2)} ms`,
      );
  });

  it('"hear the original" plays the microphone\'s own chunks with the very same delay as the answers', () => {
    const silent = () => new Float32Array(CHUNK_SAMPLES);
    const cleaned = simulate({ rate, input, latency, roundTrip: () => 2, clean: silent });
    assert.ok(db(rms(cleaned.output, rate) + 1e-12) < -90, 'answers of silence play as silence');
    const original = simulate({ rate, input, latency, roundTrip: () => 2, clean: silent, original: true });
    const echoed = simulate({ rate, input, latency, roundTrip: () => 2 });
    // The original in place of the answers, shifted by their latency: what an answer that changed nothing plays.
    const error = errorDb(original.output.subarray(rate), echoed.output.subarray(rate), 0);
    assert.ok(error < -40, `original against an unchanged answer: ${error.toFixed(1)} dB`);
  });

  it('answers that come back unevenly are queued with a margin that grows until they play without gaps', () => {
    const jitter = seededNoise(3);
    // Round trips of 1 to 12 quanta (3 to 35 ms), at random.
    const { stats } = simulate({
      rate,
      input: speechBandTones(rate, 8).samples,
      latency,
      roundTrip: () => Math.round(6.5 + 5.5 * jitter()),
    });
    const last = stats[stats.length - 1];
    const lastSecond = stats.slice(-4);
    assert.equal(lastSecond[0].underruns, last.underruns, `no gap in the last second (${last.underruns} before)`);
    assert.ok(last.delayMs! < 120, `delay ${last.delayMs!.toFixed(1)} ms`);
  });
});
