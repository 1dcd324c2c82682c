// The last resorts for an encoder that still writes peaks over the ceiling after its own rounds: ffmpeg's
// AAC encoder tried with its fast coder on the same audio, then that audio turned down by what is still
// over (gain only, no more limiting) and encoded a last time: under the ceiling, a little short of the
// target, said so. An encoder over even then fails the job, saying what was tried.
import { rename } from 'node:fs/promises';
import type { LoudnessMeasurement } from '../../audio/loudness-meter';
import { measureWavFile } from '../../audio/measure';
import { onTarget } from '../../audio/normalize';
import {
  normalizeForEncoder,
  OWN_ROUND_WAV,
  progressSpan,
  type Delivery,
  type EncodeRun,
  type EncoderRound,
} from './encoder-rounds';
import { ProcessingError } from './processor';

/** What the last encode is turned down by beyond what was still over. */
const TURN_DOWN_MARGIN_DB = 0.2;

/**
 * `kept`: the round over the ceiling whose audio is OWN_ROUND_WAV and whose encode is the work file
 * `encoded`. `encodes`: the whole encodes made so far, and whether an excerpt was tried first (for the
 * error that says what was tried).
 */
export async function lastResorts(
  run: EncodeRun,
  kept: EncoderRound,
  encodes: { whole: number; excerpt: boolean },
): Promise<Delivery> {
  const { encoder, target, work } = run;
  const { roomDb, report } = kept;
  // ffmpeg's AAC encoder (its default coder) writes lone spikes over limited peaks that come and go with a
  // fraction of a dB of gain or ceiling, so no correction lands on them (a 96 kb/s soundtrack: -1.24 dBTP
  // asked, +1.21 written). Its fast coder follows the peaks it is given: the same audio is encoded with it
  // before any loudness is given up.
  const steadier = encoder.steadierEncoder();
  let lastEncoder = encoder.encoder;
  let overDelivered: LoudnessMeasurement = kept.delivered;
  if (steadier) {
    const steadierDelivered = await encoder.encodeWhole(
      work(OWN_ROUND_WAV),
      report.output.seconds,
      progressSpan(run.onProgress, 0.95, 0.97),
      steadier,
    );
    if (steadierDelivered.truePeakDbtp <= target.ceilingDbtp)
      return { report, delivered: steadierDelivered, extra: { encoderRoomDb: roomDb, fastCoder: true } };
    lastEncoder = steadier;
    overDelivered = steadierDelivered;
  }

  // The last resort: the round's audio turned down by what is still over (gain only, no more limiting).
  const downDb = overDelivered.truePeakDbtp - target.ceilingDbtp + TURN_DOWN_MARGIN_DB;
  const keptPeakDbtp = (await measureWavFile(work(OWN_ROUND_WAV))).truePeakDbtp;
  await rename(work(OWN_ROUND_WAV), work('limited.wav'));
  await normalizeForEncoder(
    run,
    work('limited.wav'),
    {
      targetLufs: report.output.integratedLufs - downDb,
      // A little above the turned-down peaks: the limiter has nothing left to do.
      ceilingDbtp: keptPeakDbtp - downDb + 0.1,
      maxLimitingDb: 0,
    },
    [0.9, 0.05],
  );
  const lastDelivered = await encoder.encodeWhole(
    work(OWN_ROUND_WAV),
    report.output.seconds,
    progressSpan(run.onProgress, 0.97, 1),
    lastEncoder,
  );
  if (lastDelivered.truePeakDbtp <= target.ceilingDbtp)
    return {
      report: { ...report, gainDb: report.gainDb - downDb },
      delivered: lastDelivered,
      extra: {
        encoderRoomDb: roomDb,
        turnedDownDb: downDb,
        targetReached: onTarget(lastDelivered.integratedLufs, target.targetLufs),
        ...(steadier ? { fastCoder: true } : {}),
      },
    };
  const made = encodes.whole + 1 + (steadier ? 1 : 0);
  throw new ProcessingError(
    'PROCESSING_FAILED',
    `the ${encoder.output.ext.toUpperCase()} encoder kept the true peak over the ${target.ceilingDbtp} dBTP limit (${lastDelivered.truePeakDbtp.toFixed(2)} dBTP after ${encodes.excerpt ? `an excerpt and ${made}` : made} encodes: ${roomDb.toFixed(2)} dB of room under the ceiling, ${steadier ? 'then with its fast coder, ' : ''}then ${downDb.toFixed(2)} dB quieter)`,
  );
}
