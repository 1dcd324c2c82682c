// The media records of instances sharing the work, in Redis: one JSON value per media, an index of all
// media by arrival, each PROCESSING media's progress under its own key (it changes often and is never
// kept long), and one pub/sub channel on which every change of state is told, so a held `?wait=` on
// any instance answers when the instance running the job moves it on.
import type Redis from 'ioredis';
import type { MediaState } from '../../contract/endpoints';
import type { MediaProgress } from '../../contract/media-progress';
import type { MediaFiles } from '../storage/media-files';
import { newRecord, noteProgressSetAt, type MediaRecord, type NewMedia } from '../storage/media-record';
import { MediaEndedError, type MediaRecords } from '../storage/media-records';
import { ENGINE_UID, mintUid } from '../storage/media-uid';
import { StateWatchers } from '../storage/state-watchers';
import { RedisClock } from './redis-clock';
import { commandConnection, KEY_PREFIX, shared } from './redis-connection';

const mediaKey = (uid: string) => `${KEY_PREFIX}:media:${uid}`;
const progressKey = (uid: string) => `${KEY_PREFIX}:progress:${uid}`;
const INDEX = `${KEY_PREFIX}:media-index`;
/** The last status or file request for each media, on any instance (ms since the epoch), for the retention. */
const USES = `${KEY_PREFIX}:media-uses`;
export const CHANGES_CHANNEL = `${KEY_PREFIX}:changes`;

/** A progress left by an instance that died mid-job goes by itself. */
const PROGRESS_TTL_MS = 10 * 60_000;
/** Records read per call when all are listed. */
const BATCH = 500;
/**
 * The most one record may take (the engine's own are a few KiB): a bigger value in a media key is not
 * the engine's, and is never read whole, so no value can make an instance hold more than this for it.
 */
export const MAX_RECORD_BYTES = 1024 ** 2;
/** Bad records told in the error log, each once: beyond this many, the oldest may be told again. */
const TOLD_LIMIT = 10_000;

/**
 * KEYS the media; ARGV[1] the most bytes read of one. Per media: its JSON; false when gone; its size
 * when over the bound (an integer); -1 when it is not a string value.
 */
const READ_SCRIPT = `
local out = {}
for i, key in ipairs(KEYS) do
  local kind = redis.call('TYPE', key)['ok']
  if kind == 'none' then out[i] = false
  elseif kind ~= 'string' then out[i] = -1
  else
    local size = redis.call('STRLEN', key)
    if size > tonumber(ARGV[1]) then out[i] = size else out[i] = redis.call('GET', key) end
  end
end
return out
`;

/**
 * KEYS[1] the media, KEYS[2] its progress; ARGV new JSON, new state, channel, uid.
 * Applies an update atomically: none to a media that is gone (0) or has ended (-1: a job that ran
 * twice leaves the first result); a change of state drops the progress and is told on the channel as
 * "<uid> <new state>" (progress is told as "<uid>" alone).
 */
const UPDATE_SCRIPT = `
local current = redis.call('GET', KEYS[1])
if not current then return 0 end
local state = cjson.decode(current).enhancement_status
if state == 'COMPLETED' or state == 'FAILED' then return -1 end
redis.call('SET', KEYS[1], ARGV[1])
if state ~= ARGV[2] then
  redis.call('DEL', KEYS[2])
  redis.call('PUBLISH', ARGV[3], ARGV[4] .. ' ' .. ARGV[2])
end
return 1
`;

/** KEYS[1] the media, KEYS[2] its progress, KEYS[3] the index, KEYS[4] the uses; ARGV uid, channel. 1 when this call removed it. */
const REMOVE_SCRIPT = `
local removed = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('HDEL', KEYS[4], ARGV[1])
if removed == 1 then redis.call('PUBLISH', ARGV[2], ARGV[1]) end
return removed
`;

interface ScriptCommands {
  meRead(...args: Array<string | number>): Promise<Array<string | number | null>>;
  meUpdate(media: string, progress: string, json: string, state: string, channel: string, uid: string): Promise<number>;
  meRemove(media: string, progress: string, index: string, uses: string, uid: string, channel: string): Promise<number>;
}

export class RedisRecords implements MediaRecords {
  private readonly redis: Redis;
  private readonly subscriber: Redis;
  private readonly scripts: ScriptCommands;
  /** Held metadata requests on this instance, woken by the changes told on the channel. */
  private readonly watchers = new StateWatchers();
  /** When this instance last wrote each media's use. */
  private readonly useWritten = new Map<string, number>();
  /**
   * The clock every instance shares (Redis's time): the records' times are compared across instances.
   * Measured when the engine starts and before each retention sweep (cluster.ts).
   */
  readonly clock: RedisClock;
  /** Bad records already told in the error log: told once, not at every sweep. */
  private readonly told = new Set<string>();

  constructor(
    url: string,
    /** The media's files (the folder the instances share, or S3). */
    private readonly files: MediaFiles,
    /**
     * How often one instance writes the use of one media: a status poll every few seconds need not each
     * be a write; far below the retention's age limit, so that the limit still holds.
     */
    private readonly useWriteEveryMs = 30_000,
    /** This instance's own clock: the records' times are on Redis's (`clock`), measured against it. */
    localClock: () => number = Date.now,
    /** The engine's error log: each bad record skipped is told there once. */
    private readonly logError: (line: string) => void = () => undefined,
  ) {
    this.redis = commandConnection(url);
    // A connection in subscriber mode does nothing else; ioredis subscribes again after a reconnection.
    this.subscriber = commandConnection(url, { enableOfflineQueue: true, commandTimeout: undefined });
    this.subscriber.on('message', (_channel: string, message: string) => this.watchers.wake(message.split(' ')[0]));
    void this.subscriber.subscribe(CHANGES_CHANNEL).catch(() => undefined);
    this.redis.defineCommand('meUpdate', { numberOfKeys: 2, lua: UPDATE_SCRIPT });
    this.redis.defineCommand('meRemove', { numberOfKeys: 4, lua: REMOVE_SCRIPT });
    this.redis.defineCommand('meRead', { lua: READ_SCRIPT });
    this.scripts = this.redis as unknown as ScriptCommands;
    this.clock = new RedisClock(this.redis, localClock);
  }

  /** The connection the engine's other shared parts (limits, retention turn) use too. */
  get connection(): Redis {
    return this.redis;
  }

  async get(uid: string): Promise<MediaRecord | undefined> {
    const [[value], progress] = await Promise.all([
      this.read([uid]),
      shared(this.redis, () => this.redis.get(progressKey(uid))),
    ]);
    if (value === null) return undefined;
    const record = parseRecord(uid, value);
    // Damaged: answered as a fault of the service (500, logged), never as a media that does not exist.
    if (typeof record === 'string') throw new Error(`media ${uid}: ${record}`);
    return withProgress(record, progress);
  }

  /** Every media on record; a bad record is skipped (and told once), never the end of the listing. */
  async all(): Promise<MediaRecord[]> {
    const uids = await shared(this.redis, () => this.redis.zrange(INDEX, 0, -1));
    const records: MediaRecord[] = [];
    for (let i = 0; i < uids.length; i += BATCH) {
      const batch = uids.slice(i, i + BATCH);
      const values = await this.read(batch);
      batch.forEach((uid, n) => {
        if (values[n] === null) return; // removed meanwhile
        const record = parseRecord(uid, values[n]);
        if (typeof record === 'string') this.tellBadRecord(uid, record);
        else records.push(record);
      });
    }
    return records;
  }

  /** The records of `uids`, each read only when within MAX_RECORD_BYTES (else its size). */
  private async read(uids: string[]): Promise<Array<string | number | null>> {
    return shared(this.redis, () => this.scripts.meRead(uids.length, ...uids.map(mediaKey), MAX_RECORD_BYTES));
  }

  private tellBadRecord(uid: string, why: string): void {
    if (this.told.has(uid)) return;
    if (this.told.size >= TOLD_LIMIT) this.told.clear();
    this.told.add(uid);
    this.logError(
      `media ${JSON.stringify(uid.slice(0, 100))}: ${why}; skipped (delete the key ${JSON.stringify(mediaKey(uid).slice(0, 150))} once looked at)`,
    );
  }

  newUid(): string {
    return mintUid();
  }

  async create(uid: string, fields: NewMedia): Promise<MediaRecord> {
    const now = this.clock.now();
    const record = newRecord(uid, fields, now);
    await this.files.prepare(uid);
    try {
      await shared(this.redis, () =>
        this.redis
          .multi()
          .set(mediaKey(uid), JSON.stringify(record), 'NX')
          .zadd(INDEX, now, uid)
          .exec()
          .then(failedStep),
      );
    } catch (err) {
      // Not on record: nobody was told of it, and its file must not stay behind unowned.
      await this.files.remove(uid).catch(() => undefined);
      throw err;
    }
    return record;
  }

  async update(record: MediaRecord, changes: Partial<Omit<MediaRecord, 'uid'>>): Promise<void> {
    const stateChanged =
      changes.enhancement_status !== undefined && changes.enhancement_status !== record.enhancement_status;
    Object.assign(record, changes, { updated_at: new Date(this.clock.now()).toISOString() });
    if (stateChanged) {
      delete record.progress;
      this.watchers.forgetProgress(record.uid);
    }
    const { progress: _progress, ...kept } = record;
    const answer = await shared(this.redis, () =>
      this.scripts.meUpdate(
        mediaKey(record.uid),
        progressKey(record.uid),
        JSON.stringify(kept),
        record.enhancement_status,
        CHANGES_CHANNEL,
        record.uid,
      ),
    );
    if (answer === -1) throw new MediaEndedError(record.uid);
    if (answer === 0) throw new Error(`media ${record.uid} was removed; the update was not applied`);
  }

  setProgress(record: MediaRecord, progress: MediaProgress | undefined): void {
    const uid = record.uid;
    if (!progress) {
      delete record.progress;
      void this.redis.del(progressKey(uid)).catch(() => undefined);
      return;
    }
    // A takeover is news however low its percent: held requests are answered, not left on the old engine's.
    const takenOverNow = progress.taken_over !== undefined && record.progress?.taken_over === undefined;
    record.progress = progress;
    const stepped = this.watchers.progressStepped(uid, progress.percent) || takenOverNow;
    const write = this.redis
      .multi()
      .set(progressKey(uid), JSON.stringify({ progress, at: Date.now() }), 'PX', PROGRESS_TTL_MS);
    if (stepped) write.publish(CHANGES_CHANNEL, uid);
    // Progress is a hint: while Redis is away it is simply not shown.
    void write.exec().catch(() => undefined);
  }

  stateChange(uid: string, state: MediaState, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    // A change told before the watcher was listening is seen by reading the state as it is now.
    return this.watchers.wait(uid, signal, () =>
      this.get(uid).then(
        (record) => record?.enhancement_status !== state,
        () => true,
      ),
    );
  }

  async remove(uid: string): Promise<boolean> {
    const removed = await shared(this.redis, () =>
      this.scripts.meRemove(mediaKey(uid), progressKey(uid), INDEX, USES, uid, CHANGES_CHANNEL),
    );
    this.watchers.forgetProgress(uid);
    this.useWritten.delete(uid);
    await this.files.remove(uid);
    return removed === 1;
  }

  /** A status or file request for the media: written at most every `useWriteEveryMs` per media; a hint, never fails. */
  noteUse(uid: string, at: number): void {
    if (at - (this.useWritten.get(uid) ?? 0) < this.useWriteEveryMs) return;
    this.useWritten.set(uid, at);
    void this.redis.hset(USES, uid, String(at)).catch(() => this.useWritten.delete(uid));
  }

  /** The last request for each media on any instance. */
  async uses(): Promise<Map<string, number>> {
    const all = await shared(this.redis, () => this.redis.hgetall(USES));
    return new Map(Object.entries(all).map(([uid, at]) => [uid, Number(at)]));
  }

  async close(): Promise<void> {
    this.watchers.wakeAll();
    await Promise.allSettled([this.subscriber.quit(), this.redis.quit()]);
    this.subscriber.disconnect();
    this.redis.disconnect();
  }
}

const STATES = new Set(['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED']);

/** The record of `uid` as read (JSON, or the size of one too big), or why it is not one the engine wrote. */
function parseRecord(uid: string, value: string | number): MediaRecord | string {
  if (value === -1) return 'its record is not a string value';
  if (typeof value === 'number')
    return `its record is ${value} bytes, more than the ${MAX_RECORD_BYTES} a record may take: not read`;
  // A uid the engine never makes would name a path outside the media's folders when removed.
  if (!ENGINE_UID.test(uid)) return 'not a uid the engine makes';
  let record: unknown;
  try {
    record = JSON.parse(value);
  } catch {
    return 'its record is not JSON';
  }
  const fields = record as Partial<MediaRecord> | null;
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) return 'its record is not a JSON object';
  if (fields.uid !== uid) return 'its record names another uid';
  if (typeof fields.enhancement_status !== 'string' || !STATES.has(fields.enhancement_status))
    return 'its record has no known enhancement_status';
  if (typeof fields.updated_at !== 'string' || Number.isNaN(Date.parse(fields.updated_at)))
    return 'its record has no valid updated_at';
  return record as MediaRecord;
}

/** The record with the progress another instance (or this one) last set, counting down from then. */
function withProgress(record: MediaRecord, progressJson: string | null): MediaRecord {
  if (!progressJson || record.enhancement_status !== 'PROCESSING') return record;
  let told: { progress: MediaProgress; at: number };
  try {
    told = JSON.parse(progressJson) as { progress: MediaProgress; at: number };
  } catch {
    return record; // progress is a hint: a damaged one is not shown
  }
  const { progress, at } = told;
  record.progress = progress;
  noteProgressSetAt(record, at);
  return record;
}

/** A MULTI's answers: throws the first step's error, if any. */
function failedStep(answers: Array<[Error | null, unknown]> | null): void {
  if (!answers) throw new Error('redis: the transaction was aborted');
  for (const [err] of answers) if (err) throw err;
}
