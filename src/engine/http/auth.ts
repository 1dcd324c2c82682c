import { createHash, timingSafeEqual } from 'node:crypto';

/** Checks `X-API-Key` against the accepted keys in constant time (hashes make the lengths equal). */
export class KeyChecker {
  private readonly digests: Buffer[];

  constructor(keys: string[]) {
    this.digests = keys.map(digest);
  }

  /** The index of the matching key (rate limits are counted per key), or -1. */
  match(presented: string | string[] | undefined): number {
    if (typeof presented !== 'string' || presented.length === 0) return -1;
    const candidate = digest(presented);
    let found = -1;
    // Compare against every key, whatever matched, so timing does not tell which key or how many.
    this.digests.forEach((d, i) => {
      if (timingSafeEqual(d, candidate) && found < 0) found = i;
    });
    return found;
  }
}

function digest(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}
