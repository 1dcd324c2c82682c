// media-enhance-stream: live audio in messages (raw PCM chunks, as microphone nodes send them) enhanced
// chunk by chunk on this machine, each msg.topic a stream of its own with its own state, in worker
// threads (stream-threads.ts). One output per input, as long as it, delayed by the stream's latency;
// msg.complete ends a stream with its held tail, msg.reset drops it. Chunks are never reordered within a
// topic. A chunk is refused to Catch when it would wait for its thread longer than the backlog allows
// (the audio ahead of it, valued at the model's measured speed: wait-estimate.ts), when it holds a
// sample that is not audio (sample-check.ts), or when it would open a stream past the node's most.
import { MediaEnhanceError } from '../client/errors';
import { bytesPerFrame, sameFormat, type PcmFormat } from '../stream/pcm-format';
import { listStreamsOf, type OpenStreamView } from '../stream/open-streams';
import { findBadSample, SAMPLE_LIMIT, type BadSample } from '../stream/sample-check';
import { StreamThreads, type ChunkResult, type ThreadStream } from '../stream/stream-threads';
import { admits, machineSpeed, ThreadBacklog } from '../stream/wait-estimate';
import { inputError } from './input-error';
import type { NodeDef, NodeMessage, RedApi, RedNode } from './red';
import { readFormat, readStreamSettings, type StreamNodeSettings } from './stream-settings';
import { translator, type Translate } from './texts';

const TYPE = 'media-enhance-stream';
const STATUS_INTERVAL_MS = 500;
/** How long the status says that a stream ended or started afresh. */
const NOTE_MS = 3000;
/** Weight of a new chunk in the realtime factor's running mean. */
const SMOOTHING = 0.1;
/** A wait up to this is a stream keeping up (a chunk or two in flight); longer is falling behind. */
const KEEPING_UP_MS = 100;

interface Stream {
  topic: string;
  format: PcmFormat;
  thread: ThreadStream;
  latencyMs: number | null;
  realtimeFactor: number | null;
  /** Audio sent to the thread and not answered yet, in frames (whole numbers: no rounding drift). */
  waitingFrames: number;
  lastChunkAt: number;
  /** Chunks of the stream so far, refused ones too: an error names a chunk by its place. */
  received: number;
  /** Chunks sent on to its thread. */
  chunks: number;
  since: number;
  /** Bytes its state holds on its thread, as the thread last said. */
  memoryBytes: number;
  /** Streams its thread holds, as the thread last said. */
  threadStreams: number;
  /** Times its state started afresh because its output turned non-finite. */
  resets: number;
}

/** Per topic, the promise of its last output: a stream's successor never sends before it (no reordering). */
type Outputs = Map<string, Promise<void>>;

export default function (RED: RedApi): void {
  RED.nodes.registerType(TYPE, function (this: RedNode, def: NodeDef) {
    RED.nodes.createNode(this, def);
    streamNode(RED, this, def);
  });
}

function streamNode(RED: RedApi, node: RedNode, def: NodeDef): void {
  const t = translator(RED);
  let settings: StreamNodeSettings | undefined;
  try {
    settings = readStreamSettings(t, def);
  } catch (err) {
    node.error((err as Error).message);
    node.status({ fill: 'red', shape: 'ring', text: t('media-enhance.reason.invalidSettings') });
  }
  const threads = new StreamThreads();
  const streams = new Map<string, Stream>();
  const outputs: Outputs = new Map();
  /** Audio waiting for each thread, by stream: streams that ended still count until answered. */
  const backlog = new ThreadBacklog();
  /**
   * Chunks refused for topics with no stream open yet, so the stream they then open numbers its chunks on
   * from them (an error names a chunk by its place); at most as many topics as streams may be open.
   */
  const refusedBeforeOpen = new Map<string, number>();
  const noteRefusedBeforeOpen = (topic: string) => {
    refusedBeforeOpen.delete(topic);
    refusedBeforeOpen.set(topic, (refusedBeforeOpen.get(topic) ?? 0) + 1);
    while (refusedBeforeOpen.size > (settings?.maxStreams ?? 0))
      refusedBeforeOpen.delete(refusedBeforeOpen.keys().next().value!);
  };
  const speed = machineSpeed(settings?.model ?? 'FINCH');
  const nodeName = def.name || t('media-enhance-stream.paletteLabel');
  let closed = false;
  /** The done() of each message still in the node. */
  const inFlight = new Set<(err?: Error) => void>();
  /** The last time a stream ended or started afresh, said in the status for a while. */
  let note: { text: string; at: number } | undefined;
  /** How long the audio waiting for `stream`'s thread takes to clear, in ms (0 when none of it is the stream's). */
  const waitOf = (stream: Stream) =>
    stream.waitingFrames === 0 ? 0 : speed.waitMs(backlog.waiting(stream.thread.thread));
  const longestWait = () =>
    Math.max(0, ...backlog.busyThreads().map((thread) => speed.waitMs(backlog.waiting(thread))));
  const status = throttledStatus(node, t, streams, longestWait, () => note);

  const end = (stream: Stream, why?: string) => {
    stream.thread.close();
    if (streams.get(stream.topic) === stream) streams.delete(stream.topic);
    if (why) {
      note = { text: why, at: Date.now() };
      status.showNow();
    } else status.show();
  };

  const stopListing = listStreamsOf(node.id, () =>
    [...streams.values()].map((stream): OpenStreamView => ({
      nodeId: node.id,
      nodeName,
      topic: stream.topic,
      ...stream.format,
      model: settings!.model,
      latencyMs: stream.latencyMs,
      realtimeFactor: stream.realtimeFactor,
      waitMs: waitOf(stream),
      // Its state on the thread, and the chunks on their way there (each a copy of the message's bytes).
      memoryBytes: stream.memoryBytes + stream.waitingFrames * bytesPerFrame(stream.format),
      threadStreams: stream.threadStreams,
      resets: stream.resets,
      chunks: stream.chunks,
      since: stream.since,
    })),
  );

  // A stream idle for longer than the gap ends; its next chunk starts it afresh.
  const sweep = settings
    ? setInterval(
        () => {
          const now = Date.now();
          for (const stream of streams.values())
            if (stream.waitingFrames === 0 && now - stream.lastChunkAt > settings.gapMs)
              end(stream, t('media-enhance-stream.status.ended', { stream: streamName(t, stream.topic) }));
        },
        Math.min(1000, settings.gapMs),
      )
    : undefined;
  sweep?.unref();

  node.on('input', (msg, send, done) => {
    if (!settings) return done(new MediaEnhanceError('VALIDATION', t('media-enhance.reason.invalidSettings')));
    const topic = topicOf(msg.topic);
    const current = streams.get(topic);
    if (msg.reset === true) {
      if (current) end(current, t('media-enhance-stream.status.reset', { stream: streamName(t, topic) }));
      return done();
    }
    let format: PcmFormat;
    let bytes: Buffer;
    try {
      format = readFormat(t, msg, settings.format);
      bytes = readPayload(t, msg, format);
    } catch (err) {
      return done(err as Error);
    }
    const now = Date.now();
    let stream = current;
    if (stream && !sameFormat(stream.format, format)) {
      end(stream, t('media-enhance-stream.status.restartedFormat', { stream: streamName(t, topic) }));
      stream = undefined;
    } else if (stream && now - stream.lastChunkAt > settings.gapMs) {
      end(stream, t('media-enhance-stream.status.restartedGap', { stream: streamName(t, topic) }));
      stream = undefined;
    }
    if (stream) {
      stream.received++;
      stream.lastChunkAt = now;
    }
    const place = stream?.received ?? (refusedBeforeOpen.get(topic) ?? 0) + 1;
    // Refused before it opens, a stream's chunk still takes its place in the stream's numbering.
    const refuse = (err: Error) => {
      if (!stream) noteRefusedBeforeOpen(topic);
      done(err);
    };
    const bad = findBadSample(bytes, format);
    if (bad) return refuse(sampleError(t, msg.payload, topic, place, bad, format));
    // A topic past the most streams is refused for that, whatever the wait (it is no wait to retry).
    if (!stream && streams.size >= settings.maxStreams)
      return refuse(
        inputError(
          t,
          'msg.topic',
          msg.topic,
          t('media-enhance-stream.rule.tooManyStreams', {
            max: settings.maxStreams,
            setting: t('media-enhance-stream.setting.maxStreams'),
          }),
        ),
      );
    const frames = bytes.length / bytesPerFrame(format);
    const channelMs = (frames / format.rate) * 1000 * format.channels;
    // A new stream joins the thread it would open on; a new thread has nothing waiting.
    const thread = stream ? stream.thread.thread : threads.threadForNext();
    if (thread !== undefined) {
      const chunk = { stream: stream?.thread.id ?? -1, channels: format.channels, ms: channelMs };
      const withChunk = backlog.waiting(thread, chunk);
      if (!admits(speed, backlog.busy(thread), withChunk, settings.backlogMs))
        return refuse(waitError(t, topic, speed.waitMs(withChunk), settings.backlogMs));
    }
    if (!stream) {
      refusedBeforeOpen.delete(topic);
      stream = {
        topic,
        format,
        thread: threads.open(format, settings.model, settings.level),
        latencyMs: null,
        realtimeFactor: null,
        waitingFrames: 0,
        lastChunkAt: now,
        received: place,
        chunks: 0,
        since: now,
        memoryBytes: 0,
        threadStreams: 0,
        resets: 0,
      };
      streams.set(topic, stream);
    }
    const last = msg.complete === true;
    const open = stream;
    open.chunks++;
    open.waitingFrames += frames;
    backlog.add(open.thread.thread, open.thread.id, format.channels, channelMs);
    // The closing chunk ends the stream on its thread; the next chunk of the topic starts a new one.
    if (last) streams.delete(topic);
    const answer = open.thread.chunk(bytes, last);
    inFlight.add(done);
    const previous = outputs.get(topic) ?? Promise.resolve();
    const sent = previous.then(async () => {
      let result: ChunkResult;
      try {
        result = await answer;
      } catch (err) {
        if (closed) return;
        backlog.done(open.thread.id, channelMs);
        open.waitingFrames -= frames;
        end(open);
        return done(
          new MediaEnhanceError(
            'JOB_FAILED',
            t('media-enhance-stream.error.failed', { stream: streamName(t, topic), reason: (err as Error).message }),
          ),
        );
      }
      if (closed) return;
      backlog.done(open.thread.id, channelMs);
      speed.observe(result.busyMs, channelMs, result.groupMs);
      open.waitingFrames -= frames;
      open.latencyMs = (result.latency * 1000) / format.rate;
      open.memoryBytes = result.memoryBytes;
      open.threadStreams = result.threadStreams;
      const chunkMs = channelMs / format.channels;
      if (chunkMs > 0) {
        const factor = result.busyMs / chunkMs;
        open.realtimeFactor =
          open.realtimeFactor === null ? factor : open.realtimeFactor + SMOOTHING * (factor - open.realtimeFactor);
      }
      if (result.resets > open.resets) {
        // Its thread gave the stream fresh state: said in the status, the log and the sidebar's list.
        open.resets = result.resets;
        note = {
          text: t('media-enhance-stream.status.resetNonFinite', { stream: streamName(t, topic) }),
          at: Date.now(),
        };
        node.warn(note.text);
        status.showNow();
      }
      msg.payload = result.bytes;
      msg.latency = open.latencyMs;
      status.show();
      send(msg);
      done();
    });
    outputs.set(topic, sent);
    void sent.then(() => {
      inFlight.delete(done);
      if (outputs.get(topic) === sent) outputs.delete(topic);
    });
    status.show();
  });

  node.on('close', (_removed, done) => {
    closed = true;
    // Chunks still in the node end here: done, and nothing is sent for them.
    for (const finish of inFlight) finish();
    inFlight.clear();
    clearInterval(sweep);
    stopListing();
    status.close();
    streams.clear();
    void threads.close().then(
      () => done(),
      () => done(),
    );
  });
}

/** msg.topic as the stream's key: '' for none, a string as it is, anything else as JSON. */
function topicOf(topic: unknown): string {
  if (topic === undefined || topic === null) return '';
  return typeof topic === 'string' ? topic : JSON.stringify(topic);
}

/** The stream as messages name it: stream "its topic", or "the default stream" for messages without one. */
function streamName(t: Translate, topic: string): string {
  return topic === '' ? t('media-enhance-stream.stream.default') : t('media-enhance-stream.stream.topic', { topic });
}

/** msg.payload: a Buffer of whole frames; a closing message may bring none. */
function readPayload(t: Translate, msg: NodeMessage, format: PcmFormat): Buffer {
  if (msg.complete === true && (msg.payload === undefined || msg.payload === null)) return Buffer.alloc(0);
  if (!Buffer.isBuffer(msg.payload))
    throw inputError(t, 'msg.payload', msg.payload, t('media-enhance-stream.rule.buffer'));
  const frame = bytesPerFrame(format);
  if (msg.payload.length % frame !== 0)
    throw inputError(
      t,
      'msg.payload',
      msg.payload,
      t('media-enhance-stream.rule.wholeFrames', {
        bytes: frame,
        channels: format.channels,
        encoding: format.encoding,
      }),
    );
  return msg.payload;
}

function sampleError(
  t: Translate,
  payload: unknown,
  topic: string,
  place: number,
  bad: BadSample,
  format: PcmFormat,
): MediaEnhanceError {
  return inputError(
    t,
    'msg.payload',
    payload,
    t('media-enhance-stream.rule.samples', {
      encoding: format.encoding,
      limit: SAMPLE_LIMIT,
      chunk: place,
      stream: streamName(t, topic),
      value: String(bad.value),
      frame: bad.frame,
      channel: bad.channel,
    }),
  );
}

function waitError(t: Translate, topic: string, waitMs: number, backlogMs: number): MediaEnhanceError {
  return new MediaEnhanceError(
    'RATE_LIMITED',
    t('media-enhance-stream.error.wait', {
      stream: streamName(t, topic),
      wait: Math.round(waitMs),
      bound: backlogMs,
      setting: t('media-enhance-stream.setting.backlog'),
    }),
    { retryable: true },
  );
}

/** The node's status, at most twice a second: streams open, realtime factor, latency; how long chunks wait. */
function throttledStatus(
  node: RedNode,
  t: Translate,
  streams: Map<string, Stream>,
  waitMs: () => number,
  note: () => { text: string; at: number } | undefined,
): { show(): void; showNow(): void; close(): void } {
  let timer: NodeJS.Timeout | undefined;
  let shownAt = 0;
  let closed = false;
  const render = () => {
    timer = undefined;
    if (closed) return;
    shownAt = Date.now();
    const open = [...streams.values()];
    const noted = note();
    if (noted && shownAt - noted.at < NOTE_MS) {
      // A stream that ended or started afresh is said first; the figures come back after NOTE_MS.
      node.status({ fill: 'blue', shape: 'ring', text: noted.text });
      timer = setTimeout(render, noted.at + NOTE_MS - shownAt);
      return;
    }
    if (open.length === 0) {
      node.status({ fill: 'grey', shape: 'ring', text: t('media-enhance-stream.status.idle') });
      return;
    }
    const factors = open.flatMap((s) => (s.realtimeFactor === null ? [] : [s.realtimeFactor]));
    const factor = factors.length === 0 ? 0 : factors.reduce((a, b) => a + b, 0) / factors.length;
    const latencies = open.flatMap((s) => (s.latencyMs === null ? [] : [s.latencyMs]));
    const latency = latencies.length === 0 ? '-' : formatMs(Math.max(...latencies));
    const wait = waitMs();
    const count = open.length;
    const shown = factor.toFixed(2);
    if (wait > KEEPING_UP_MS)
      node.status({
        fill: 'yellow',
        shape: 'dot',
        text: t('media-enhance-stream.status.waiting', { count, factor: shown, wait: Math.round(wait) }),
      });
    else
      node.status({
        fill: 'green',
        shape: 'dot',
        text: t('media-enhance-stream.status.streams', { count, factor: shown, latency }),
      });
  };
  return {
    show() {
      if (closed || timer) return;
      timer = setTimeout(render, Math.max(0, shownAt + STATUS_INTERVAL_MS - Date.now()));
    },
    showNow() {
      clearTimeout(timer);
      render();
    },
    close() {
      closed = true;
      clearTimeout(timer);
    },
  };
}

function formatMs(ms: number): string {
  return Number.isInteger(ms) ? String(ms) : ms.toFixed(2);
}
