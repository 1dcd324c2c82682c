// The limits of the engine's HTTP server, with their defaults: `startEngine({ server })` and the CLI's flags set them.

/**
 * What the HTTP server accepts at once and how long it waits (server.ts applies them). Uploads can be
 * several GiB from a slow line, so nothing bounds a request's total time by default: a transfer that
 * stalls (`idleTimeoutMs`) or headers that never end (`headersTimeoutMs`) are what get cut.
 * What a client meets when one is reached: docs/interface.md#server-limits.
 */
export interface ServerLimits {
  /** Largest request head (request line and headers). Default 16 KiB; over it: 431. */
  maxHeaderBytes: number;
  /** Most header fields in one request. Default 100; over it: 431. */
  maxHeaderCount: number;
  /** Time to receive a request's head, however slowly it drips (slowloris). Default 30 s; then 408 and closed. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, body included. Default 0: none (a multi-GiB upload on a slow line is honest). */
  requestTimeoutMs: number;
  /** A connection on which nothing moves either way for this long is closed (408 if nothing was answered yet). Default 60 s. */
  idleTimeoutMs: number;
  /** How long an idle keep-alive connection stays open between requests. Default 15 s. */
  keepAliveTimeoutMs: number;
  /** Open connections served at once. Default 1024; a request on a connection beyond them: 503 with Retry-After. */
  maxConnections: number;
  /** Uploads (POST /v2/medias, /v1/videos) in progress at once per key. Default 64; beyond: 503 with Retry-After. */
  maxUploadsPerKey: number;
  /**
   * Open connections one client address may hold (within `maxConnections`). Default 1024 (in effect
   * `maxConnections`): behind a load balancer or proxy, every client has the proxy's address. Beyond:
   * 503 with Retry-After at once, and closed.
   */
  maxConnectionsPerClient: number;
  /** Metadata `?wait=` requests held at once per key. Default 1024; beyond, a wait is answered at once. */
  maxHeldWaitsPerKey: number;
}

export const DEFAULT_SERVER_LIMITS: ServerLimits = {
  maxHeaderBytes: 16 * 1024,
  maxHeaderCount: 100,
  headersTimeoutMs: 30_000,
  requestTimeoutMs: 0,
  idleTimeoutMs: 60_000,
  keepAliveTimeoutMs: 15_000,
  maxConnections: 1024,
  maxUploadsPerKey: 64,
  maxConnectionsPerClient: 1024,
  maxHeldWaitsPerKey: 1024,
};
