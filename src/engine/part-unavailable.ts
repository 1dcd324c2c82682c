// A part the engine relies on, and may share with other instances (the shared state in Redis, the media
// storage), does not answer: nothing the caller did wrong and nothing wrong with the media. Raised where
// the part is called (cluster/, storage/); http/ answers it 503 with Retry-After, and jobs leave the media
// where it is to start over once the part is back.

/** Seconds a caller is asked to wait while a part is away: reconnection is tried every 2 s at most. */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

export class PartUnavailableError extends Error {
  /**
   * @param message what is away, naming the part, never its address or a secret
   * @param detail what a caller is told
   * @param retryAfterS when a caller should try again
   */
  constructor(
    message: string,
    readonly detail: string,
    readonly retryAfterS: number,
  ) {
    super(message);
    this.name = 'PartUnavailableError';
  }
}
