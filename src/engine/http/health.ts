// GET /healthz, for load balancers: whether this instance can serve now. One process on local disk
// always can; instances sharing their state answer 503 while a part they share (Redis, the storage)
// does not answer. No key is asked and nothing is told beyond ok / unavailable and what the instance can
// do (`ffmpeg`: whether it decodes anything but WAV).
import type { ServerResponse } from 'node:http';
import { UNAVAILABLE_RETRY_AFTER_S } from '../part-unavailable';
import { HttpError, sendJson } from './http-error';

export const HEALTH_PATH = '/healthz';

/** A shared part the engine needs: `probe` resolves when it answers; `up` says whether it did last time it was asked. */
export interface HealthProbe {
  name: string;
  probe(): Promise<void>;
  /** Known without a round trip (a connection's state): false refuses new media at once. */
  up(): boolean;
}

export class Health {
  private readonly probes: HealthProbe[] = [];
  /** What the answer tells besides the status (what this instance can do), e.g. `ffmpeg: false`. */
  private readonly told: Record<string, boolean> = {};

  /** A fact about this instance for the answer (never an address, a path or a key). */
  tell(name: string, value: boolean): void {
    this.told[name] = value;
  }

  /** The facts told (answerHealth adds them to the status). */
  facts(): Record<string, boolean> {
    return { ...this.told };
  }

  /** A part to ask (Redis here; the storage, when shared, adds its own). */
  add(probe: HealthProbe): void {
    this.probes.push(probe);
  }

  /** Whether every part answers within `timeoutMs`. */
  async check(timeoutMs = 2000): Promise<boolean> {
    const answers = this.probes.map((p) =>
      Promise.race([
        p.probe().then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs).unref()),
      ]).catch(() => false),
    );
    return (await Promise.all(answers)).every(Boolean);
  }

  /**
   * Refuses a new media before its body is read when a shared part is known to be away: an upload is
   * never taken in to be lost, and the caller knows at once to retry.
   */
  assertAcceptingMedia(): void {
    const away = this.probes.find((p) => !p.up());
    if (away) throw unavailable(away.name);
  }
}

/** 503 with Retry-After: a shared part (named, never its address) does not answer. */
export function unavailable(part: string): HttpError {
  return new HttpError(503, `the service cannot reach its ${part} now; retry later`, {
    'retry-after': String(UNAVAILABLE_RETRY_AFTER_S),
  });
}

export async function answerHealth(res: ServerResponse, health: Health): Promise<void> {
  const ok = await health.check();
  if (ok) sendJson(res, 200, { status: 'ok', ...health.facts() }, { 'cache-control': 'no-store' });
  else
    sendJson(
      res,
      503,
      { status: 'unavailable', ...health.facts() },
      { 'cache-control': 'no-store', 'retry-after': String(UNAVAILABLE_RETRY_AFTER_S) },
    );
}
