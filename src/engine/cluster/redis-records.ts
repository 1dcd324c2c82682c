// The media records of instances sharing the work, in Redis: one JSON value per media, an index of all
// media by arrival, each PROCESSING media's progress under its own key (it changes often and is never
// kept long), and one pub/sub channel on which every change of state is told, so a held `?wait=` on
// any instance answers when the instance running the job moves it on.
import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { MediaState } from '../../contract/endpoints';
import type { MediaProgress } from '../../contract/media-progress';
import type { IncomingFile } from '../storage/media-files';
import { MediaEndedError, type MediaRecords, type NewMedia } from '../storage/media-records';
import { noteProgressSetAt, type MediaRecord, type MediaStore } from '../storage/store';
import { commandConnection, KEY_PREFIX, shared } from './redis-connection';

const mediaKey = (uid: string) => `${KEY_PREFIX}:media:${uid}`;
const progressKey = (uid: string) => `${KEY_PREFIX}:progress:${uid}`;
const INDEX = `${KEY_PREFIX}:media-index`;
/** The last status or file request for each media, on any instance (ms since the epoch), for the retention. */
const USES = `${KEY_PREFIX}:media-uses`;
export const CHANGES_CHANNEL = `${KEY_PREFIX}:changes`;

/** A progress left by an instance that died mid-job goes by itself. */
const PROGRESS_TTL_MS = 10 * 60_000;
/** Points of progress (percent) that answer a held status request, as in one process (store.ts). */
const PROGRESS_STEP = 10;
/** Records read per MGET when all are listed. */
const BATCH = 500;

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
  meUpdate(media: string, progress: string, json: string, state: string, channel: string, uid: string): Promise<number>;
  meRemove(media: string, progress: string, index: string, uses: string, uid: string, channel: string): Promise<number>;
}

export class RedisRecords implements MediaRecords {
  private readonly redis: Redis;
  private readonly subscriber: Redis;
  private readonly scripts: ScriptCommands;
  /** Who waits for a media's state to change (held metadata requests on this instance), by uid. */
  private readonly watchers = new Map<string, Set<() => void>>();
  /** The percent at which held requests were last woken, per media this instance is processing. */
  private readonly progressAnswered = new Map<string, number>();
  /** When this instance last wrote each media's use. */
  private readonly useWritten = new Map<string, number>();

  constructor(
    url: string,
    /** The media's files (the folder the instances share). */
    private readonly store: MediaStore,
    /**
     * How often one instance writes the use of one media: a status poll every few seconds need not each
     * be a write; far below the retention's age limit, so that the limit still holds.
     */
    private readonly useWriteEveryMs = 30_000,
  ) {
    this.redis = commandConnection(url);
    // A connection in subscriber mode does nothing else; ioredis subscribes again after a reconnection.
    this.subscriber = commandConnection(url, { enableOfflineQueue: true, commandTimeout: undefined });
    this.subscriber.on('message', (_channel: string, message: string) => this.wake(message.split(' ')[0]));
    void this.subscriber.subscribe(CHANGES_CHANNEL).catch(() => undefined);
    this.redis.defineCommand('meUpdate', { numberOfKeys: 2, lua: UPDATE_SCRIPT });
    this.redis.defineCommand('meRemove', { numberOfKeys: 4, lua: REMOVE_SCRIPT });
    this.scripts = this.redis as unknown as ScriptCommands;
  }

  /** The connection the engine's other shared parts (limits, retention turn) use too. */
  get connection(): Redis {
    return this.redis;
  }

  async get(uid: string): Promise<MediaRecord | undefined> {
    const [json, progress] = await shared(this.redis, () => this.redis.mget(mediaKey(uid), progressKey(uid)));
    return json ? withProgress(JSON.parse(json) as MediaRecord, progress) : undefined;
  }

  async all(): Promise<MediaRecord[]> {
    const uids = await shared(this.redis, () => this.redis.zrange(INDEX, 0, -1));
    const records: MediaRecord[] = [];
    for (let i = 0; i < uids.length; i += BATCH) {
      const batch = uids.slice(i, i + BATCH);
      const values = await shared(this.redis, () => this.redis.mget(batch.map(mediaKey)));
      for (const json of values) if (json) records.push(JSON.parse(json) as MediaRecord);
    }
    return records;
  }

  async create(fields: NewMedia, uploaded?: IncomingFile): Promise<MediaRecord> {
    const uid = uploaded?.uid ?? randomUUID();
    const now = new Date();
    const record: MediaRecord = {
      uid,
      enhancement_status: 'PENDING',
      inserted_at: now.toISOString(),
      updated_at: now.toISOString(),
      ...fields,
    };
    await this.store.files.prepare(uid);
    if (uploaded) await this.store.files.adoptUpload(uploaded.id, uid);
    try {
      await shared(this.redis, () =>
        this.redis
          .multi()
          .set(mediaKey(uid), JSON.stringify(record), 'NX')
          .zadd(INDEX, now.getTime(), uid)
          .exec()
          .then(failedStep),
      );
    } catch (err) {
      // Not on record: nobody was told of it, and its file must not stay behind unowned.
      await this.store.remove(uid).catch(() => undefined);
      throw err;
    }
    return record;
  }

  async update(record: MediaRecord, changes: Partial<Omit<MediaRecord, 'uid'>>): Promise<void> {
    const stateChanged =
      changes.enhancement_status !== undefined && changes.enhancement_status !== record.enhancement_status;
    Object.assign(record, changes, { updated_at: new Date().toISOString() });
    if (stateChanged) {
      delete record.progress;
      this.progressAnswered.delete(record.uid);
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
    record.progress = progress;
    const stepped = progress.percent - (this.progressAnswered.get(uid) ?? 0) >= PROGRESS_STEP;
    if (stepped) this.progressAnswered.set(uid, progress.percent);
    const write = this.redis
      .multi()
      .set(progressKey(uid), JSON.stringify({ progress, at: Date.now() }), 'PX', PROGRESS_TTL_MS);
    if (stepped) write.publish(CHANGES_CHANNEL, uid);
    // Progress is a hint: while Redis is away it is simply not shown.
    void write.exec().catch(() => undefined);
  }

  stateChange(uid: string, state: MediaState, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      let watchers = this.watchers.get(uid);
      if (!watchers) this.watchers.set(uid, (watchers = new Set()));
      const done = () => {
        watchers.delete(done);
        if (watchers.size === 0 && this.watchers.get(uid) === watchers) this.watchers.delete(uid);
        signal.removeEventListener('abort', done);
        resolve();
      };
      watchers.add(done);
      signal.addEventListener('abort', done, { once: true });
      // A change told before this watcher was listening is seen here: the state as it is now.
      this.get(uid).then(
        (record) => record?.enhancement_status !== state && done(),
        () => done(),
      );
    });
  }

  async remove(uid: string): Promise<boolean> {
    const removed = await shared(this.redis, () =>
      this.scripts.meRemove(mediaKey(uid), progressKey(uid), INDEX, USES, uid, CHANGES_CHANNEL),
    );
    this.progressAnswered.delete(uid);
    this.useWritten.delete(uid);
    await this.store.remove(uid);
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
    for (const watchers of this.watchers.values()) for (const wake of [...watchers]) wake();
    await Promise.allSettled([this.subscriber.quit(), this.redis.quit()]);
    this.subscriber.disconnect();
    this.redis.disconnect();
  }

  private wake(uid: string): void {
    for (const wake of [...(this.watchers.get(uid) ?? [])]) wake();
  }
}

/** The record with the progress another instance (or this one) last set, counting down from then. */
function withProgress(record: MediaRecord, progressJson: string | null): MediaRecord {
  if (!progressJson || record.enhancement_status !== 'PROCESSING') return record;
  const { progress, at } = JSON.parse(progressJson) as { progress: MediaProgress; at: number };
  record.progress = progress;
  noteProgressSetAt(record, at);
  return record;
}

/** A MULTI's answers: throws the first step's error, if any. */
function failedStep(answers: Array<[Error | null, unknown]> | null): void {
  if (!answers) throw new Error('redis: the transaction was aborted');
  for (const [err] of answers) if (err) throw err;
}
