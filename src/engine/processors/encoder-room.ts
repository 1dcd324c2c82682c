// How far under the ceiling an output's own rounds set the limiter for its encoder's overshoot, and how
// much limiting beyond the bound makes up the loudness that room and the encoder took off: the figures
// measured on speech and music through each lossy encoder.

/**
 * A lossy encoder adds its own error to the peaks. Where it stands out over a peak left under the ceiling
 * (speech at a low bitrate), its amplitude stays about the same whatever the ceiling (it follows the
 * loudness, which stays) and lands on other peaks from one encode to the next: the second encode leaves
 * ENCODER_SPREAD times the amplitude the first one added as room. Where the limiter holds many peaks at
 * the ceiling (loud music), the overshoot grows with the limiting added for it (more peaks for the
 * encoder to push over): the room is OVERSHOOT_GROWTH times the overshoot, plus OVERSHOOT_MARGIN_DB.
 */
const ENCODER_SPREAD = 1.5;
const OVERSHOOT_GROWTH = 2;
const OVERSHOOT_MARGIN_DB = 0.2;
/** The most room left for an encoder under the ceiling (dB). */
const MAX_ENCODER_ROOM_DB = 6;
/**
 * The most limiting a lossy output may add beyond the bound to make up for its encoder (dB). Music through
 * ffmpeg's AAC coder showed why a bound is needed: its overshoot (1-2 dB on a lone drum hit at 128 kb/s)
 * left 6 dB of room, and 3 dB of limiting per LU to win back took a 30 s intro to 28 dB of limiting, its
 * drums flattened. 4 dB is what about 1 dB of room costs on dense music (drums: 3.5 dB of limiting at
 * -1 dBTP, 7.8 at -2) and keeps the total within 12 dB at the default bound: a target that needs more is
 * left short, under the ceiling, and said so.
 */
const MAX_ENCODER_LIMITING_DB = 4;
/**
 * Limiting allowed beyond the bound per LU to win back in the second encode: limited music and speech
 * gain about a third of an LU per dB of gain.
 */
const LIMITING_PER_LOST_LU = 3;
/** A second guess of the room is made when the encode left more than this unused under the ceiling (dB)... */
const UNUSED_ROOM_DB = 0.5;
/** ...aiming this far under the ceiling (dB): the encoder's peaks move by a few tenths from one round to the next. */
const AIM_UNDER_CEILING_DB = 0.3;

/** How far under the ceiling to set the limiter (dB) so that the encoder's overshoot keeps under it (ENCODER_SPREAD). */
export function encoderRoomDb(ceilingDbtp: number, normalizedPeakDbtp: number, deliveredPeakDbtp: number): number {
  const amplitude = (db: number) => 10 ** (db / 20);
  const overshootDb = deliveredPeakDbtp - ceilingDbtp;
  const added = Math.max(0, amplitude(deliveredPeakDbtp) - amplitude(normalizedPeakDbtp));
  const left = amplitude(ceilingDbtp) - ENCODER_SPREAD * added;
  const standingOutDb = left > 0 ? ceilingDbtp - 20 * Math.log10(left) : Infinity;
  const growingDb = OVERSHOOT_GROWTH * overshootDb + OVERSHOOT_MARGIN_DB;
  return Math.min(MAX_ENCODER_ROOM_DB, Math.max(standingOutDb, growingDb));
}

/**
 * The limiting not counted against the bound in a round with `roomDb` of room (dB): for a target the
 * normalizer reached, what wins back the loudness the lower ceiling and the encoder (`shiftLu`) took off,
 * at most MAX_ENCODER_LIMITING_DB; for one it did not, the lower ceiling alone (the gain stays where the
 * bound left it).
 */
export function makeUpLimitingDb(roomDb: number, shiftLu: number, targetReached: boolean): number {
  return targetReached
    ? Math.min(MAX_ENCODER_LIMITING_DB, LIMITING_PER_LOST_LU * (roomDb + Math.max(0, shiftLu)))
    : roomDb;
}

/**
 * The room for a second guess, from a round with `roomDb` that ended `overDb` over the ceiling (under it
 * when negative), or undefined when that round stands. The room was guessed from an encode at another
 * ceiling, and the encoder's overshoot moves with the limiting (on music it can shrink as well as grow):
 * guessed again when the round is under the ceiling by more than UNUSED_ROOM_DB (limiting, or loudness,
 * given up for nothing), or still over it, unless the encoder has a steadier coder to try first.
 */
export function secondGuessRoomDb(roomDb: number, overDb: number, steadierCoder: boolean): number | undefined {
  const unused = -overDb;
  if (!((overDb > 0 && !steadierCoder) || (unused > UNUSED_ROOM_DB && roomDb > 0))) return undefined;
  return Math.min(MAX_ENCODER_ROOM_DB, Math.max(0, roomDb - unused + AIM_UNDER_CEILING_DB));
}
