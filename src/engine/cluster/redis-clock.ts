// One clock for instances sharing their media: Redis's (TIME). Each instance's own clock may be hours
// off; the times retention compares (when a media was finished, last asked for, and now) are all read
// on this one, so an instance ahead of the others never removes media just finished elsewhere.
import type Redis from 'ioredis';

export class RedisClock {
  /** Redis's time minus this instance's, as last measured. */
  private offsetMs = 0;

  constructor(
    private readonly redis: Redis,
    /** This instance's own clock. */
    private readonly local: () => number,
  ) {}

  /** Measures the offset again (at start, and before each sweep); Redis's time now. Rejects while Redis is away. */
  async sync(): Promise<number> {
    const sent = this.local();
    const [seconds, micros] = await this.redis.time();
    const received = this.local();
    const redisMs = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    // Redis read its time somewhere between the two readings here: halfway is the best guess.
    this.offsetMs = redisMs - Math.round((sent + received) / 2);
    return redisMs;
  }

  /** Redis's time now, from this instance's clock and the last offset measured (no round trip). */
  now(): number {
    return this.local() + this.offsetMs;
  }
}
