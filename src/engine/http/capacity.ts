// What the server takes at once: open connections, and uploads in progress per key. Beyond either,
// a request is answered 503 with Retry-After at once; it is never left hanging or silently dropped.
import type { Socket } from 'node:net';

export class Capacity {
  private open = 0;
  /** Connections that came beyond the cap: each request on them is answered 503, then they close. */
  private readonly beyond = new WeakSet<Socket>();
  private readonly uploads = new Map<number, number>();

  constructor(
    readonly maxConnections: number,
    readonly maxUploadsPerKey: number,
  ) {}

  /** Counts a new connection until it closes. */
  connected(socket: Socket): void {
    this.open++;
    if (this.open > this.maxConnections) this.beyond.add(socket);
    socket.once('close', () => this.open--);
  }

  isBeyondCap(socket: Socket): boolean {
    return this.beyond.has(socket);
  }

  /** A place for one more upload of this key: its release (call it once), or undefined when the key has none left. */
  takeUpload(keyIndex: number): (() => void) | undefined {
    const running = this.uploads.get(keyIndex) ?? 0;
    if (running >= this.maxUploadsPerKey) return undefined;
    this.uploads.set(keyIndex, running + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.uploads.get(keyIndex) ?? 1) - 1;
      if (left > 0) this.uploads.set(keyIndex, left);
      else this.uploads.delete(keyIndex);
    };
  }
}
