// What every media node does with a message, whatever its operation: run it with its own abort signal,
// show its progress, send the result or pass the error to Catch nodes with the original msg, and on
// close cancel everything, call done() for each message in flight, send nothing afterwards, and warn
// of the messages that end there (those not kept for the next start).
import { basename } from 'node:path';
import { MediaEnhanceError } from '../client/errors';
import type { WaitEvent } from '../client/transport';
import type { MediaMetadata, ProgressCallback } from '../client/types';
import { sidebarRegistry, type JobHandle } from '../sidebar/registry';
import type { DoneFunction, NodeMessage, RedNode, SendFunction } from './red';
import { StatusBoard, type JobStatus } from './status-board';
import {
  doneStatus,
  failureText,
  processingText,
  progressText,
  stateText,
  takenOverText,
  waitText,
  type Transfer,
} from './status-text';
import type { Translate } from './texts';

export interface Job {
  msg: NodeMessage;
  /** Aborted when the node closes (redeploy, stop). */
  signal: AbortSignal;
  show: (status: JobStatus) => void;
  /** For the client's `onWait`: "queued 2nd", "rate limited 12s". */
  onWait: (event: WaitEvent) => void;
  /** For the client's `onProgress`: "uploading 42%". */
  progress: (transfer: Transfer) => ProgressCallback;
  /**
   * Runs `action` in the same tick as the outcome is delivered (the message sent, or the error passed to
   * Catch); never when the node closes first and the outcome is dropped.
   */
  onDelivered: (action: () => void) => void;
  /** The finished media's metadata, when the job has it: a loudness target it could not reach shows in the last status. */
  media?: MediaMetadata;
  /** Whether this message's delivery finishes its media (a result in the sidebar); the node's setting unless set. */
  finishesMedia?: boolean;
  /** Tells the editor's sidebar which media the job works on, as soon as the node knows it. */
  noteMedia: (uid: string, fileName?: string) => void;
  /** The node's texts, for a status of its own. */
  t: Translate;
  /** The node's log (Node-RED's log, at info level). */
  log: (text: string) => void;
}

/**
 * For the client's `onStatus`: how far the media is when the service says ("processing 42%, about 30 s
 * left"), else its state and the time since the wait began ("processing 1m20s").
 */
export function showMediaStatus(job: Job): (status: string, media: MediaMetadata) => void {
  const since = Date.now();
  let toldTakenOver = false;
  return (status, media) => {
    // A takeover is logged once: the status says it for as long as the work runs on the other engine.
    const takenOver = toldTakenOver || status !== 'PROCESSING' ? undefined : takenOverText(job.t, media.uid, media);
    if (takenOver) {
      toldTakenOver = true;
      job.log(takenOver);
    }
    const progress = status === 'PROCESSING' ? processingText(job.t, media) : undefined;
    job.show(progress ? { text: progress } : { text: stateText(job.t, status), since });
  };
}

/**
 * Runs one message; resolves with the message to send, or with several (one per file, in order) that
 * leave the node's one output together. It must not change `job.msg` before it succeeds.
 */
export type JobHandler = (job: Job) => Promise<NodeMessage | NodeMessage[]>;

/** Node-RED waits 15 s for a node to close; leave room for the rest of the flow. */
const CLOSE_DEADLINE_MS = 10_000;

/** How the editor's sidebar lists the node's jobs. */
export interface JobListing {
  /** The node's name, or its type's label. */
  nodeName: string;
  /** The config node's id. */
  serviceId: string | null;
  /** Whether a delivered message means its media is finished (a result), or only started (an upload). */
  finishesMedia: boolean;
}

export interface MessageJobs {
  /**
   * Runs a message that did not arrive as input (one kept across a restart): sent, or passed to Catch.
   * `prepare` sees its job before the handler does.
   */
  resume(msg: NodeMessage, prepare?: (job: Job) => void): void;
}

export function handleMessages(
  node: RedNode,
  t: Translate,
  handler: JobHandler,
  listing: JobListing,
  firstStatus: JobStatus = { text: t('media-enhance.status.starting') },
  /** Keeps a message the node took but will not run, for its next start; false when it cannot (message-keeper.ts). */
  keepForNextStart: (msg: NodeMessage) => Promise<boolean> = () => Promise.resolve(false),
): MessageJobs {
  const board = new StatusBoard(node);
  const inFlight = new Map<
    AbortController,
    { msg: NodeMessage; running: Promise<void>; kept: () => boolean; listed: JobHandle }
  >();
  let closed = false;
  // Messages that came while the node was stopping, being kept for its next start; the close waits for them.
  const lateKeeps = new Set<Promise<void>>();
  let lateUnkept = 0;

  const run = (msg: NodeMessage, send: SendFunction, done: DoneFunction, prepare?: (job: Job) => void) => {
    if (closed) {
      // A full deploy stops the node that sent it too: the message is the node's now, and kept, not dropped.
      const keeping = keepForNextStart(msg).then((kept) => {
        if (!kept) lateUnkept++;
        done();
      });
      lateKeeps.add(keeping);
      void keeping.finally(() => lateKeeps.delete(keeping));
      return;
    }
    const controller = new AbortController();
    const id = board.begin(firstStatus);
    const listed = sidebarRegistry.beginJob(
      { nodeId: node.id, nodeName: listing.nodeName, nodeType: node.type, serviceId: listing.serviceId },
      firstStatus.text,
      firstStatus.since,
    );
    const named = fileNameOfMessage(msg);
    if (named !== null) listed.file(named);
    // The node's status line and the job's sidebar row show the same stage.
    const show = (status: JobStatus) => {
      board.update(id, status);
      listed.stage(status.text, status.since);
    };
    const delivered: (() => void)[] = [];
    const job: Job = {
      msg,
      signal: controller.signal,
      show,
      onWait: (event) => show({ text: waitText(t, event), fill: 'yellow' }),
      progress: (transfer) => (moved, total) => show({ text: progressText(t, transfer, moved, total) }),
      onDelivered: (action) => delivered.push(action),
      noteMedia: (uid, fileName) => listed.media(uid, fileName),
      t,
      log: (text) => node.log(text),
    };
    prepare?.(job);
    const running = Promise.resolve()
      .then(() => handler(job))
      .then(
        (out) => {
          if (closed) return done();
          board.end(id, doneStatus(t, job.media));
          listed.done(job.media, job.finishesMedia ?? listing.finishesMedia);
          runAll(delivered, node);
          // Several messages on the node's one output: Node-RED takes them as an array inside the array of outputs.
          send(Array.isArray(out) ? [out] : out);
          done();
        },
        (err: unknown) => {
          if (closed) return done();
          board.end(id, { fill: 'red', shape: 'ring', text: failureText(t, err) });
          listed.failed(err, job.media);
          runAll(delivered, node);
          done(asError(err));
        },
      )
      .finally(() => {
        inFlight.delete(controller);
        listed.dropped();
      });
    // A job that will end an entry on delivery has its message kept for the next start.
    inFlight.set(controller, { msg, running, kept: () => delivered.length > 0, listed });
  };

  node.on('input', (msg, send, done) => run(msg, send, done));

  node.on('close', (_removed, done) => {
    closed = true;
    board.close();
    const jobs = [...inFlight.values()];
    for (const job of jobs) job.listed.dropped();
    const runs = jobs.map((job) => job.running);
    // A job not kept yet had sent nothing (a node keeps its message before it uploads): kept now, it runs
    // whole at the next start; the entry is being written before the job sees its abort, so it writes none.
    const keeps = jobs.filter((job) => !job.kept()).map((job) => keepForNextStart(job.msg));
    for (const controller of inFlight.keys())
      controller.abort(new MediaEnhanceError('ABORTED', t('media-enhance.error.stopped')));
    let deadline: NodeJS.Timeout | undefined;
    const late = new Promise<void>((resolve) => (deadline = setTimeout(resolve, CLOSE_DEADLINE_MS)));
    const settled = async () => {
      const kept = await Promise.all(keeps.map((keeping) => keeping.catch(() => false)));
      await Promise.allSettled(runs);
      // Node-RED delivers each message in a later turn than it routes it: one routed to this node before the
      // deploy stopped the flow arrives after this close began. It is kept before the next start reads the journal.
      await new Promise((resolve) => setImmediate(resolve));
      while (lateKeeps.size > 0) await Promise.allSettled([...lateKeeps]);
      return kept.filter((yes) => !yes).length + lateUnkept;
    };
    void Promise.race([settled(), late.then(() => undefined)]).then((dropped) => {
      clearTimeout(deadline);
      // Node-RED drops what a stopped node holds; say so, since these messages will not come back.
      if (dropped === undefined || dropped > 0)
        node.warn(t('media-enhance.warn.stoppedUnkept', { count: dropped ?? keeps.length + lateUnkept }));
      node.status({});
      done();
    });
  });

  return {
    resume: (msg, prepare) =>
      run(
        msg,
        (out) => node.send(out),
        (err) => {
          if (err) node.error(err, msg);
        },
        prepare,
      ),
  };
}

/**
 * The file a message brings, as the sidebar names its row from the start (so a message that fails before
 * the service names its media still shows its file): msg.filename's base name, else a URL's last segment.
 */
export function fileNameOfMessage(msg: NodeMessage): string | null {
  if (typeof msg.filename === 'string' && msg.filename.trim() !== '') return basename(msg.filename.trim()) || null;
  if (typeof msg.url === 'string') {
    try {
      const last = new URL(msg.url).pathname.split('/').pop();
      return last ? decodeURIComponent(last) : null;
    } catch {
      return null; // the node names the bad URL in its error
    }
  }
  return null;
}

function runAll(actions: (() => void)[], node: RedNode): void {
  for (const action of actions) {
    try {
      action();
    } catch (err) {
      node.warn((err as Error).message);
    }
  }
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
