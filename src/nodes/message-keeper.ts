// What a node that takes a message on for a media (wait, download, enhance file) does to keep it across restarts:
// journal it when it starts, end the entry in the tick the outcome is delivered, and at start resume
// every message kept by an earlier run of the same node. A node whose setting "keep across restarts"
// is off keeps nothing, and drops what an earlier run kept, naming each media.
import type { Job, MessageJobs } from './message-jobs';
import { MessageJournal, keptFolder, type KeptMessage } from './message-journal';
import type { NodeDef, NodeMessage, RedApi, RedNode } from './red';

export class MessageKeeper {
  private readonly journal?: MessageJournal;
  /** Read before anything new is written, so a message is resumed or taken as input, never both. */
  private readonly loaded?: ReturnType<MessageJournal['load']>;
  /** Messages read back from the journal, by the message object they resume. */
  private readonly resumed = new WeakMap<NodeMessage, KeptMessage>();

  constructor(
    RED: RedApi,
    private readonly node: RedNode,
    def: NodeDef,
  ) {
    if (typeof def.service !== 'string' || def.service === '') return;
    const journal = new MessageJournal(keptFolder(RED.settings, def.service, node.id));
    // Flows saved before the setting existed keep their messages too.
    if (def.keepAcrossRestarts === false) {
      void this.dropAll(journal);
      return;
    }
    this.journal = journal;
    this.loaded = journal.load();
  }

  /** Whether messages are kept (the setting is on and a service is chosen). */
  get keeping(): boolean {
    return this.journal !== undefined;
  }

  /** The media of a message resumed from the journal (a node that starts with an upload skips it then). */
  resumedMediaUid(msg: NodeMessage): string | undefined {
    return this.resumed.get(msg)?.entry.mediaUid;
  }

  /**
   * Keeps the job's message until its outcome is delivered; answers when the node first took it on
   * (earlier than now for a message resumed after a restart).
   */
  async keep(job: Job, mediaUid: string): Promise<number> {
    let kept = this.resumed.get(job.msg);
    if (!kept && this.journal) {
      await this.loaded?.catch(() => undefined);
      try {
        kept = await this.journal.keep(mediaUid, job.msg);
      } catch (err) {
        this.node.warn(`media ${mediaUid}: this message will not survive a restart: it could not be kept on disk (${(err as Error).message})`);
      }
    }
    if (!kept) return Date.now();
    const entry = kept;
    job.onDelivered(() => entry.remove());
    return entry.entry.startedAt;
  }

  /** Runs each message an earlier run of this node kept. */
  resumeInto(jobs: MessageJobs): void {
    void this.loaded?.then(
      ({ kept, unreadable }) => {
        for (const line of unreadable) this.node.warn(`a kept message could not be read and is skipped: ${line}`);
        if (kept.length > 0) this.node.log(`resuming ${kept.length} message(s) kept across a restart or redeploy`);
        for (const message of kept) {
          const msg = message.entry.msg;
          if (message.entry.dropped.length > 0) msg.media_resumed = { dropped: message.entry.dropped };
          this.resumed.set(msg, message);
          jobs.resume(msg);
        }
      },
      (err: Error) => this.node.error(`the kept messages could not be read: ${err.message}`),
    );
  }

  private async dropAll(journal: MessageJournal): Promise<void> {
    try {
      for (const uid of await journal.discard()) this.node.warn(`media ${uid}: its kept message is dropped: "keep across restarts" is off`);
    } catch (err) {
      this.node.warn(`the kept messages could not be removed: ${(err as Error).message}`);
    }
  }
}
