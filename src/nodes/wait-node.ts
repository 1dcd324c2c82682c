// media-enhance-wait: holds a message until its media is COMPLETED; a failed media or a timeout goes
// to Catch nodes with the original msg (media_uid kept, so a flow can retry). Each wait is kept in a
// journal until its message is delivered, so a restart or a redeploy resumes it instead of ending it.
import { MAX_TIMER_MS } from '../client/clock';
import { handleMessages, showMediaStatus } from './message-jobs';
import { inputError, readMediaUid } from './msg-inputs';
import { checkSettingsAtDeploy, serviceOf } from './node-service';
import type { NodeDef, NodeMessage, RedApi, RedNode } from './red';
import { WaitJournal, waitsFolder, type KeptWait } from './wait-journal';
import { dropWaitsOfDeletedNodes } from './wait-journal-sweep';

export const WAIT_TYPE = 'media-enhance-wait';

export default function register(RED: RedApi): void {
  RED.events.on('flows:started', () => void dropWaitsOfDeletedNodes(RED, WAIT_TYPE));

  RED.nodes.registerType(WAIT_TYPE, function (this: RedNode, def: NodeDef) {
    RED.nodes.createNode(this, def);
    const node = this;
    const service = serviceOf(RED, this, def);
    const timeout = def.timeout === undefined || def.timeout === '' ? undefined : Number(def.timeout);
    const checkTimeout = () => {
      if (timeout !== undefined && !(timeout > 0 && timeout * 1000 <= MAX_TIMER_MS)) {
        throw inputError('setting "timeout (s)"', def.timeout, 'must be a number of seconds from 1 to 2147483, or empty for the config node\'s default');
      }
    };
    checkSettingsAtDeploy(this, checkTimeout);
    // Flows saved before the setting existed keep waiting across restarts too.
    const folder = typeof def.service === 'string' ? waitsFolder(RED.settings, def.service, node.id) : undefined;
    const journal = folder && def.keepAcrossRestarts !== false ? new WaitJournal(folder) : undefined;
    if (folder && !journal) void dropKeptWaits(node, new WaitJournal(folder));
    /** Waits read back from the journal, by the message object they resume. */
    const resumed = new WeakMap<NodeMessage, KeptWait>();

    // Read before anything new is written, so a wait is resumed or taken as input, never both.
    const kept = journal?.load();

    const keep = async (uid: string, msg: NodeMessage): Promise<KeptWait | undefined> => {
      if (!journal) return undefined;
      await kept?.catch(() => undefined);
      try {
        return await journal.keep(uid, msg);
      } catch (err) {
        node.warn(`media ${uid}: this wait will not survive a restart: the journal could not be written (${(err as Error).message})`);
        return undefined;
      }
    };

    const jobs = handleMessages(
      this,
      async (job) => {
        checkTimeout();
        const uid = readMediaUid(job.msg, { orPayload: true });
        const wait = resumed.get(job.msg) ?? (await keep(uid, job.msg));
        // The entry ends with the message's delivery, not before: a close in between keeps it for the next start.
        if (wait) job.onDelivered(() => wait.remove());
        const startedAt = wait?.entry.startedAt ?? Date.now();
        const timeoutMs = timeout === undefined ? service.waitTimeoutMs() : timeout * 1000;
        const client = await service.client();
        const metadata = await client.waitForCompletion(uid, {
          signal: job.signal,
          // A wait resumed after a restart keeps its original deadline.
          timeoutMs: timeoutMs === undefined ? undefined : Math.max(1, startedAt + timeoutMs - Date.now()),
          onStatus: showMediaStatus(job),
        });
        job.msg.media_uid = uid;
        job.msg.payload = metadata;
        return job.msg;
      },
      { text: 'waiting' },
    );

    if (kept) {
      void kept.then(
        ({ waits, unreadable }) => {
          for (const line of unreadable) node.warn(`a kept wait could not be read and is skipped: ${line}`);
          if (waits.length > 0) node.log(`resuming ${waits.length} wait(s) kept across a restart or redeploy`);
          for (const wait of waits) {
            const msg = wait.entry.msg;
            if (wait.entry.dropped.length > 0) msg.media_resumed = { dropped: wait.entry.dropped };
            resumed.set(msg, wait);
            jobs.resume(msg);
          }
        },
        (err: Error) => node.error(`the kept waits could not be read: ${err.message}`),
      );
    }
  });
}

/** The setting was turned off: waits kept before are not resumed, and each is named in the log. */
async function dropKeptWaits(node: RedNode, journal: WaitJournal): Promise<void> {
  try {
    for (const uid of await journal.discard()) node.warn(`no longer waiting for media ${uid}: "keep waiting across restarts" is off`);
  } catch (err) {
    node.warn(`the kept waits could not be removed: ${(err as Error).message}`);
  }
}
