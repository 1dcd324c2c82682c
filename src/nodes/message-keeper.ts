// What a node that takes a message on for a media (upload, wait, download, enhance file) does to keep
// it across restarts: journal it when it starts, end the entry in the tick the outcome is delivered, and
// at start resume every message kept by an earlier run of the same node. A node whose setting "keep across restarts"
// is off keeps nothing, and drops what an earlier run kept, naming each media.
import { join } from 'node:path';
import type { DeliveryPlace, KeptFile } from './deliver-outputs';
import { readFileOutput } from './file-output';
import { adoptLegacyFolder, idSegment } from './id-segment';
import { noteRunningJournal } from './journal-sweep';
import type { Job, MessageJobs } from './message-jobs';
import {
  KEPT_FOLDER,
  MessageJournal,
  describeEntry,
  journalRoot,
  keptFolder,
  keptMessageMaxBytes,
  serviceFolder,
  type KeptMessage,
} from './message-journal';
import { resolvePath } from './msg-inputs';
import type { NodeDef, NodeMessage, RedApi, RedNode } from './red';
import { translator, type Translate } from './texts';

export class MessageKeeper {
  private readonly journal?: MessageJournal;
  /** Read before anything new is written, so a message is resumed or taken as input, never both. */
  private readonly loaded?: ReturnType<MessageJournal['load']>;
  /** The entry of each message kept now, read back from the journal or written in this run. */
  private readonly kept = new WeakMap<NodeMessage, KeptMessage>();
  /** Messages whose entry is being written: a second keep waits for it rather than write another. */
  private readonly writing = new WeakMap<NodeMessage, Promise<KeptMessage | undefined>>();
  /** Messages whose delivery already ends their entry. */
  private readonly ending = new WeakSet<NodeMessage>();

  private readonly t: Translate;

  constructor(
    RED: RedApi,
    private readonly node: RedNode,
    def: NodeDef,
    /** The node offers the setting "keep ... across restarts"; a node that does not keeps nothing. */
    offered: boolean,
  ) {
    this.t = translator(RED);
    if (!offered || typeof def.service !== 'string' || def.service === '') return;
    const journal = openJournal(RED, node, def.service, def);
    // Flows saved before the setting existed keep their messages too.
    if (def.keepAcrossRestarts === false) {
      void this.dropAll(journal);
      return;
    }
    this.journal = journal;
    this.loaded = journal.load();
  }

  /** Whether messages are kept (the node offers it, the setting is on and a service is chosen). */
  get keeping(): boolean {
    return this.journal !== undefined;
  }

  /** The media of a kept message, once its upload is done (a node that starts with an upload skips it then). */
  mediaUidOf(msg: NodeMessage): string | undefined {
    return this.kept.get(msg)?.entry.mediaUid;
  }

  /**
   * Keeps the job's message until its outcome is delivered, noting its media when known (called again
   * with the uid once an upload has created it). Answers since when the node has known the media (or,
   * before an upload, taken the message on): earlier than now for a message resumed after a restart.
   */
  async keep(job: Job, mediaUid?: string): Promise<number> {
    if (!this.journal) return Date.now();
    this.endOnDelivery(job);
    let kept = this.kept.get(job.msg);
    // A job its node has stopped must not write: the next start may already be running the entry.
    if (job.signal.aborted) return kept?.entry.mediaSince ?? Date.now();
    if (kept && mediaUid !== undefined && kept.entry.mediaUid !== mediaUid) {
      await kept.recordMedia(mediaUid).catch((err: Error) => this.cannotKeep(mediaUid, err));
    }
    if (!kept) kept = await this.write(job.msg, mediaUid);
    return kept?.entry.mediaSince ?? Date.now();
  }

  /**
   * Keeps, for the next start, a message the node took but will not run: one that came while it was
   * stopping (a full deploy stops the nodes that send to it too), or one in flight that had not been kept
   * yet. Its job had sent nothing, so the next start runs it whole. A Buffer waiting to be uploaded cannot
   * be kept: false for it, as when messages are not kept.
   */
  async keepForNextStart(msg: NodeMessage, uploads: boolean): Promise<boolean> {
    if (!this.journal || (uploads && Buffer.isBuffer(msg.payload))) return false;
    if (this.kept.has(msg)) return true;
    return (await this.write(msg, undefined)) !== undefined;
  }

  /** Writes the message's entry once, however many ask for it at the same time. */
  private write(msg: NodeMessage, mediaUid: string | undefined): Promise<KeptMessage | undefined> {
    let writing = this.writing.get(msg);
    if (!writing) {
      const journal = this.journal!;
      writing = (async () => {
        await this.loaded?.catch(() => undefined);
        const kept = await journal.keep(mediaUid, msg).catch((err: Error) => this.cannotKeep(mediaUid, err));
        if (kept) this.kept.set(msg, kept);
        return kept;
      })();
      this.writing.set(msg, writing);
      void writing.finally(() => this.writing.delete(msg));
    }
    return writing;
  }

  /**
   * Keeps a message whose file is about to be uploaded: a file from a path can be sent again after a
   * restart; a Buffer cannot be kept (it would be dropped), so such a message is kept only once uploaded.
   */
  async keepBeforeUpload(job: Job): Promise<void> {
    if (!Buffer.isBuffer(job.msg.payload)) await this.keep(job);
  }

  /** Notes the part file of a kept message's download, so dropping the message removes it too. */
  async notePartFile(job: Job, path: string): Promise<void> {
    const kept = this.kept.get(job.msg);
    if (!kept || job.signal.aborted) return;
    await kept.recordPartFile(path).catch((err: Error) => this.cannotKeep(kept.entry.mediaUid, err));
  }

  /** Notes a file the kept message's delivery put in place, so a restart hands it on rather than fetching it again. */
  async noteDelivered(job: Job, file: KeptFile): Promise<void> {
    const kept = this.kept.get(job.msg);
    if (!kept || job.signal.aborted || file.path === undefined) return;
    await kept.recordDelivered(file).catch((err: Error) => this.cannotKeep(kept.entry.mediaUid, err));
  }

  /** The files an earlier run of the node put in place for this message (none for a message taken on now). */
  deliveredOf(job: Job): readonly KeptFile[] {
    return this.kept.get(job.msg)?.entry.delivered ?? [];
  }

  /**
   * What a delivery into a folder needs to go on across restarts: each finished file noted, and those an
   * earlier run noted; nothing when messages are not kept.
   */
  deliveryKeeping(job: Job): Pick<DeliveryPlace, 'keepPart' | 'keepDelivered' | 'delivered'> {
    if (!this.keeping) return {};
    return {
      keepPart: (path) => this.notePartFile(job, path),
      keepDelivered: (file) => this.noteDelivered(job, file),
      delivered: this.deliveredOf(job),
    };
  }

  /** Registered before the first write, so the job counts as kept from its start, and a failure ends its entry too. */
  private endOnDelivery(job: Job): void {
    const msg = job.msg;
    if (this.ending.has(msg)) return;
    this.ending.add(msg);
    job.onDelivered(() => {
      this.kept.get(msg)?.remove();
      this.kept.delete(msg);
      this.ending.delete(msg);
    });
  }

  private cannotKeep(mediaUid: string | undefined, err: Error): undefined {
    const what = mediaUid
      ? this.t('media-enhance.keep.media', { uid: mediaUid })
      : this.t('media-enhance.keep.aMessage');
    this.node.warn(this.t('media-enhance.keep.cannotKeep', { what, error: err.message }));
    return undefined;
  }

  /** Runs each message an earlier run of this node kept; its entry ends with its delivery, whatever fails first. */
  resumeInto(jobs: MessageJobs): void {
    void this.loaded?.then(
      ({ kept, unreadable }) => {
        for (const line of unreadable) this.node.warn(this.t('media-enhance.keep.unreadable', { reason: line }));
        if (kept.length > 0) this.node.log(this.t('media-enhance.keep.resuming', { count: kept.length }));
        for (const message of kept) {
          const msg = message.entry.msg;
          if (message.entry.dropped.length > 0) msg.media_resumed = { dropped: message.entry.dropped };
          this.kept.set(msg, message);
          jobs.resume(msg, (job) => this.endOnDelivery(job));
        }
      },
      (err: Error) => this.node.error(this.t('media-enhance.keep.cannotRead', { error: err.message })),
    );
  }

  private async dropAll(journal: MessageJournal): Promise<void> {
    try {
      for (const entry of await journal.discard())
        this.node.warn(this.t('media-enhance.keep.droppedSettingOff', { what: describeEntry(this.t, entry) }));
    } catch (err) {
      this.node.warn(this.t('media-enhance.keep.cannotRemove', { error: (err as Error).message }));
    }
  }
}

/**
 * The node's journal, after moving one an earlier version kept under its old folder names (ids such as
 * `ef:1` were folded to `ef_1`), and noted as running until the node closes, so the deleted-node sweep
 * leaves it alone.
 */
function openJournal(RED: RedApi, node: RedNode, serviceId: string, def: NodeDef): MessageJournal {
  const root = journalRoot(RED.settings);
  const claimed = (segment: string): boolean => {
    let found = false;
    RED.nodes.eachNode((other) => (found ||= idSegment(other.id) === segment));
    return found;
  };
  adoptLegacyFolder(root, serviceId, claimed);
  adoptLegacyFolder(join(serviceFolder(RED.settings, serviceId), KEPT_FOLDER), node.id, claimed);
  const folder = keptFolder(RED.settings, serviceId, node.id);
  const output = readFileOutput(def);
  // Part files are written directly inside the node's download folder (file-output.ts).
  const partFolders =
    output.toFile && output.folder !== '' ? [resolvePath(output.folder, RED.settings.fileWorkingDirectory)] : [];
  const maxMessageBytes = keptMessageMaxBytes(RED.settings, (text) => node.warn(text));
  const release = noteRunningJournal(folder, partFolders);
  node.on('close', (_removed, done) => {
    release();
    done();
  });
  return new MessageJournal(folder, { root, partFolders, maxMessageBytes });
}

/** The time left of a timeout that counts from `since` (a wait resumed after a restart keeps its first deadline). */
export function remainingMs(timeoutMs: number | undefined, since: number): number | undefined {
  return timeoutMs === undefined ? undefined : Math.max(1, since + timeoutMs - Date.now());
}
