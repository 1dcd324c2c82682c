// What the sidebar shows, as the runtime holds it: the services (one per deployed config node), the
// jobs in flight in every media node, and the last results. Config nodes and media nodes write to it;
// the plugin (publisher and admin routes) reads it. It is one module instance, so nodes and plugin,
// which load the same dist file, share it; without the plugin (a runtime that loads only the nodes)
// it just holds the state.
import { randomUUID } from 'node:crypto';
import type { MediaEnhanceClient } from '../client/client';
import { MediaEnhanceError } from '../client/errors';
import type { MediaMetadata } from '../client/types';
import { openStreams } from '../stream/open-streams';
import { loudnessSummary } from './loudness-summary';
import { ResultRing } from './result-ring';
import { describeService, type ServiceEntry, type ServiceStorage } from './service-state';
import {
  IN_FLIGHT_LISTED,
  ROW_TEXT_MAX,
  type InFlightRow,
  type JobNode,
  type ResultRow,
  type SidebarState,
} from './state';

export interface ServiceHandle {
  /** The service can be used: its client, its URL (never a key) and, for a built-in engine, its storage. */
  ready(client: MediaEnhanceClient, url: string, storage?: ServiceStorage): void;
  /** The service cannot be used, and why. */
  failed(error: string): void;
  /** The config node closed. */
  remove(): void;
}

export interface JobHandle {
  readonly id: string;
  /** The node's status text for this job, and since when its elapsed time counts (as the status shows it). */
  stage(text: string, since?: number): void;
  /** The name of the file the message brought (its msg.filename, the URL's last segment), before any media. */
  file(fileName: string): void;
  /** The media the job works on, once known; without a name, the name another row of that media knows. */
  media(uid: string, fileName?: string): void;
  /** The job delivered its message; `media` when it has the media's metadata. With `asResult` false it only leaves the list. */
  done(media: MediaMetadata | undefined, asResult: boolean): void;
  /** The job failed with `err`; `media` when it had the media's metadata (a processed media's file can still be had). */
  failed(err: unknown, media?: MediaMetadata): void;
  /** The node closed under it: it leaves the list without a result. */
  dropped(): void;
}

/** An in-flight row, with the file name its result will show. */
type JobRow = InFlightRow & { fileName: string | null };

export class SidebarRegistry {
  private readonly services = new Map<string, ServiceEntry>();
  private readonly jobs = new Map<string, JobRow>();
  private readonly results = new ResultRing();
  private readonly listeners = new Set<() => void>();
  private readonly removalListeners = new Set<(uid: string) => void>();

  constructor(private readonly now: () => number = Date.now) {}

  addService(id: string, info: { name: string; kind: 'built-in' | 'remote' }): ServiceHandle {
    const entry: ServiceEntry = { id, ...info, url: null, error: null, client: null, storage: null };
    this.services.delete(id);
    this.services.set(id, entry);
    this.changed();
    const current = () => this.services.get(id) === entry;
    return {
      ready: (client, url, storage) => {
        if (!current()) return;
        Object.assign(entry, { client, url, error: null, storage: storage ?? null });
        this.changed();
      },
      failed: (error) => {
        if (!current()) return;
        Object.assign(entry, { client: null, error, storage: null });
        this.changed();
      },
      remove: () => {
        if (!current()) return;
        this.services.delete(id);
        this.changed();
      },
    };
  }

  /** The client of a deployed, usable service. */
  clientOf(serviceId: string | null): MediaEnhanceClient | null {
    return serviceId === null ? null : (this.services.get(serviceId)?.client ?? null);
  }

  beginJob(start: JobNode, firstStage: string, since?: number): JobHandle {
    const id = randomUUID();
    const startedAt = this.now();
    const row: JobRow = {
      id,
      ...start,
      uid: null,
      stage: firstStage,
      stageSince: since ?? null,
      startedAt,
      fileName: null,
    };
    this.jobs.set(id, row);
    this.changed();
    const leave = (): boolean => this.jobs.delete(id);
    const result = (outcome: 'done' | 'failed', fields: Partial<ResultRow>): ResultRow => ({
      id,
      nodeId: row.nodeId,
      nodeName: row.nodeName,
      nodeType: row.nodeType,
      serviceId: row.serviceId,
      uid: row.uid,
      fileName: row.fileName,
      outcome,
      errorCode: null,
      error: null,
      startedAt,
      finishedAt: this.now(),
      loudness: null,
      ...fields,
    });
    return {
      id,
      stage: (text, since) => {
        if (!this.jobs.has(id) || (row.stage === text && row.stageSince === (since ?? null))) return;
        row.stage = text;
        row.stageSince = since ?? null;
        this.changed();
      },
      file: (fileName) => {
        if (!this.jobs.has(id) || row.fileName === fileName) return;
        row.fileName = fileName;
        this.changed();
      },
      media: (uid, fileName) => {
        if (!this.jobs.has(id) || (row.uid === uid && (fileName === undefined || row.fileName === fileName))) return;
        row.uid = uid;
        // A wait or download node knows only the uid: the upload's row before it knew the file.
        const named = fileName ?? this.fileNameOf(uid, id);
        if (named !== null) row.fileName = named;
        this.changed();
      },
      done: (media, asResult) => {
        if (!leave()) return;
        if (asResult) {
          this.results.add(
            result('done', {
              uid: media?.uid ?? row.uid,
              fileName: media?.file_name ?? row.fileName,
              loudness: loudnessSummary(media),
            }),
          );
        }
        this.changed();
      },
      failed: (err, media) => {
        if (!leave()) return;
        const code = err instanceof MediaEnhanceError ? err.code : null;
        const uid = row.uid ?? (err instanceof MediaEnhanceError ? (err.mediaUid ?? null) : null);
        const failed = result('failed', { uid, errorCode: code, error: errorSentence(err) });
        if (media?.enhancement_status === 'COMPLETED' && media.uid === uid) failed.enhancedReady = true;
        this.results.add(failed);
        this.changed();
      },
      dropped: () => {
        if (leave()) this.changed();
      },
    };
  }

  /** The deployed built-in engines whose storage is known, in deploy order. */
  storages(): { serviceId: string; name: string; storage: ServiceStorage }[] {
    return [...this.services.values()].flatMap((entry) =>
      entry.storage ? [{ serviceId: entry.id, name: entry.name, storage: entry.storage }] : [],
    );
  }

  /** The media of the jobs in flight: a removal of finished media leaves them (a download may follow). */
  mediaInFlight(): Set<string> {
    return new Set([...this.jobs.values()].flatMap((row) => (row.uid === null ? [] : [row.uid])));
  }

  /** Whether this instance handled the media (a result or a job in flight): only those can be downloaded through the editor. */
  handled(uid: string): boolean {
    if (this.results.hasMedia(uid)) return true;
    for (const row of this.jobs.values()) if (row.uid === uid) return true;
    return false;
  }

  /** The file name another row (a job in flight, then a result) gives the media, or null. */
  private fileNameOf(uid: string, exceptJob: string): string | null {
    for (const row of this.jobs.values())
      if (row.id !== exceptJob && row.uid === uid && row.fileName) return row.fileName;
    return this.results.list().find((row) => row.uid === uid && row.fileName)?.fileName ?? null;
  }

  /** The service a handled media belongs to (the newest row naming it). */
  serviceOfMedia(uid: string): string | null {
    const result = this.results.list().find((row) => row.uid === uid);
    if (result) return result.serviceId;
    for (const row of this.jobs.values()) if (row.uid === uid) return row.serviceId;
    return null;
  }

  result(id: string): ResultRow | undefined {
    return this.results.get(id);
  }

  clearResults(): void {
    this.results.clear();
    this.changed();
  }

  /** The state as the editor gets it: the oldest IN_FLIGHT_LISTED jobs and a count of the rest, texts cut short. */
  snapshot(): SidebarState {
    const inFlight: InFlightRow[] = [];
    for (const { fileName: _fileName, ...row } of this.jobs.values()) {
      if (inFlight.length === IN_FLIGHT_LISTED) break;
      inFlight.push({ ...row, nodeName: clip(row.nodeName), stage: clip(row.stage) });
    }
    return {
      services: [...this.services.values()].map((entry) => describeService(entry)),
      inFlight,
      inFlightMore: this.jobs.size - inFlight.length,
      results: this.results.list().map((row) => ({
        ...row,
        nodeName: clip(row.nodeName),
        fileName: row.fileName === null ? null : clip(row.fileName),
        error: row.error === null ? null : clip(row.error),
      })),
      streams: openStreams()
        .slice(0, IN_FLIGHT_LISTED)
        .map((row) => ({ ...row, nodeName: clip(row.nodeName), topic: clip(row.topic) })),
      sentAt: this.now(),
    };
  }

  /** Calls `listener` after every change of the state the registry holds (not of the limiters: poll those). */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** A built-in engine removed the media `uid` (its retention rule, or the editor's removal). */
  mediaRemoved(uid: string): void {
    for (const listener of this.removalListeners) listener(uid);
  }

  /** Calls `listener` with each media a built-in engine removed. */
  onMediaRemoved(listener: (uid: string) => void): () => void {
    this.removalListeners.add(listener);
    return () => this.removalListeners.delete(listener);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

/** A text cut to ROW_TEXT_MAX characters, an ellipsis saying so. */
function clip(text: string): string {
  return text.length <= ROW_TEXT_MAX ? text : `${text.slice(0, ROW_TEXT_MAX - 1)}…`;
}

function errorSentence(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The registry of this Node-RED instance. */
export const sidebarRegistry = new SidebarRegistry();
