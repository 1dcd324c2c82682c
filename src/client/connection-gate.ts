// How many requests with a body are being sent at once. The connection pool caps the sockets per
// origin, but a body is built (a file opened) before the pool takes its request: without this gate,
// thousands of uploads at once would each hold an open file while they wait for a connection.

export class ConnectionGate {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly size: number) {}

  /** Resolves once a place is free; call the returned function (once) to give it back. */
  async enter(signal?: AbortSignal): Promise<() => void> {
    if (this.active >= this.size) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          const at = this.waiting.indexOf(go);
          if (at >= 0) this.waiting.splice(at, 1);
          reject(signal!.reason as Error);
        };
        const go = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(go);
      });
    } else this.active++;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const next = this.waiting.shift();
      // The place passes straight to the next in line: `active` stays as it is.
      if (next) next();
      else this.active--;
    };
  }
}
