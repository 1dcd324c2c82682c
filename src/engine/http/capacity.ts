// What the server takes at once: open connections (in all, and per client address), uploads in progress
// per key, and `?wait=` requests held per key. Beyond any of them a request is answered at once (503 with
// Retry-After, or a held wait answered as the media stands); it is never left hanging or silently dropped.
import type { Socket } from 'node:net';

export class Capacity {
  private open = 0;
  /** Connections that came beyond the cap: each request on them is answered 503, then they close. */
  private readonly beyond = new WeakSet<Socket>();
  /** Open connections per client address (those within its cap). */
  private readonly perClient = new Map<string, number>();
  private readonly uploads = new Map<number, number>();
  private readonly heldWaits = new Map<number, number>();

  constructor(
    readonly maxConnections: number,
    readonly maxUploadsPerKey: number,
    /** Connections one client address may hold; those beyond are answered 503 and closed at once. */
    readonly maxConnectionsPerClient = maxConnections,
    /** `?wait=` requests one key may have held at once; beyond, a wait is answered at once. */
    readonly maxHeldWaitsPerKey = Infinity,
  ) {}

  /**
   * Counts a new connection until it closes; false when its client address holds all it may already:
   * such a connection is not counted, so one client's slow connections never take the others' places.
   */
  connected(socket: Socket): boolean {
    const client = clientOf(socket);
    const held = this.perClient.get(client) ?? 0;
    if (held >= this.maxConnectionsPerClient) return false;
    this.perClient.set(client, held + 1);
    this.open++;
    if (this.open > this.maxConnections) this.beyond.add(socket);
    socket.once('close', () => {
      this.open--;
      const left = (this.perClient.get(client) ?? 1) - 1;
      if (left > 0) this.perClient.set(client, left);
      else this.perClient.delete(client);
    });
    return true;
  }

  isBeyondCap(socket: Socket): boolean {
    return this.beyond.has(socket);
  }

  /** A place for one more upload of this key: its release (call it once), or undefined when the key has none left. */
  takeUpload(keyIndex: number): (() => void) | undefined {
    return take(this.uploads, keyIndex, this.maxUploadsPerKey);
  }

  /** A place for one more held `?wait=` of this key: its release, or undefined when the key holds all it may. */
  holdWait(keyIndex: number): (() => void) | undefined {
    return take(this.heldWaits, keyIndex, this.maxHeldWaitsPerKey);
  }
}

/** One of `limit` places counted in `counts` under `key`: its release (idempotent), or undefined when none is left. */
function take(counts: Map<number, number>, key: number, limit: number): (() => void) | undefined {
  const running = counts.get(key) ?? 0;
  if (running >= limit) return undefined;
  counts.set(key, running + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (counts.get(key) ?? 1) - 1;
    if (left > 0) counts.set(key, left);
    else counts.delete(key);
  };
}

/** The client's address (an IPv4 client of a dual-stack socket as IPv4). */
function clientOf(socket: Socket): string {
  const address = socket.remoteAddress ?? '';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}
