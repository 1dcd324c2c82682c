import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  checkEnhanceJsonBody,
  checkEnhancementSettings,
  checkStep,
  isOutputStep,
  SETTINGS_DEFAULTS,
  type EnhanceJsonBody,
  type EnhancementSettings,
} from '../../contract/fields';
import type { FieldIssue } from '../../contract/field-issue';
import { checkSettingsForInput } from '../../contract/settings-combinations';
import type { Faults } from '../faults';
import type { JobStarter } from '../jobs/jobs';
import type { MediaRecords } from '../storage/media-records';
import { attachmentDisposition as contentDisposition } from '../../contract/attachment';
import { excerpt } from '../../contract/excerpt';
import type { DecodedRoom } from './decoded-room';
import { sniffMediaType, type MediaType } from '../storage/media-type';
import { receiveUpload } from './multipart';
import { writeAnswer } from './write-answer';
import type { MediaRetention } from '../storage/retention';
import { HttpError, unprocessable } from './http-error';
import {
  LOUDNESS_REPORT_ANSWERS,
  LOUDNESS_REPORT_HEADER,
  type LoudnessReportAnswer,
} from '../../contract/loudness-report';
import { checkMetadataWait, METADATA_WAIT_PARAM } from '../../contract/metadata-wait';
import { namedOutputFile, type MediaFileName, type MediaFiles } from '../storage/media-files';
import { metadataJson, processedFileName, publicMetadata, type MediaRecord } from '../storage/media-record';

export interface RouteContext {
  /** The media's files. */
  files: MediaFiles;
  /** The media's records and states. */
  records: MediaRecords;
  /** Longest `?wait=` of a metadata request, in seconds; 0: the extension is not offered. */
  metadataWaitS: number;
  jobs: JobStarter;
  faults: Faults;
  retention: MediaRetention;
  maxUploadBytes: number;
  /** Refuses an upload whose decoded audio the data folder has no room for (507). */
  room?: DecodedRoom;
}

/** An answer: status and JSON body (or its bytes, ready). File downloads write themselves. */
export interface JsonAnswer {
  status: number;
  body: unknown;
}

const JSON_BODY_LIMIT = 64 * 1024;

/** POST /v1/media/enhance-json: accepted at once; the file is fetched in the background. */
export async function enhanceJson(req: IncomingMessage, ctx: RouteContext): Promise<JsonAnswer> {
  const contentType = req.headers['content-type'] ?? '';
  if (!/^application\/json/i.test(contentType)) {
    throw unprocessable([
      {
        loc: ['header', 'content-type'],
        msg: 'application/json is required',
        type: 'value_error.content_type',
        input: contentType,
      },
    ]);
  }
  const text = await readText(req, JSON_BODY_LIMIT);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw unprocessable([
      { loc: ['body'], msg: `invalid JSON: ${(err as Error).message}`, type: 'value_error.jsondecode' },
    ]);
  }
  const issues = checkEnhanceJsonBody(body);
  if (issues.length > 0) throw unprocessable(issues);
  const request = body as EnhanceJsonBody;
  const settings = {
    loudness_target: request.loudness_target_level,
    true_peak: request.loudness_peak_limit,
    // v1 gives the level as a fraction (0..1); processors get the v2 scale whatever the operation (v1's 0
    // is kept: no noise reduction at all, which v2's 1..100 cannot ask for).
    enhancement_level: Math.round(request.enhancement_level * 100),
    enhancement_model: request.model_arch,
    ...(request.transcode_kind ? { transcode: request.transcode_kind } : {}),
  };
  const record = await ctx.records.create(ctx.records.newUid(), {
    file_name: request.file_name,
    enhancement_params: { ...settings, transcode: request.transcode_kind },
    internal: { source: 'enhance-json', settings, downloadUrl: request.file_download_url },
  });
  await startJob(record, ctx);
  return { status: 201, body: { generated_name: record.uid } };
}

/** POST /v2/medias and POST /v1/videos: a multipart upload, streamed to the storage of media files. */
export async function upload(req: IncomingMessage, ctx: RouteContext, kind: 'upload' | 'video'): Promise<JsonAnswer> {
  const part = kind === 'upload' ? 'media_enhancement' : 'video_enhancement';
  // The media's uid is born here, once: its upload is received for it, then its record made under it.
  const uid = ctx.records.newUid();
  const received = await receiveUpload(req, () => ctx.files.receive(uid, ctx.faults.uploadFs()), ctx.maxUploadBytes);
  // Once kept, the upload is the media's input: only forgetKept may remove it (a record may point at it).
  let kept = false;
  try {
    const settings = parseSettings(received.fields.get(part), part);
    const type = sniffMediaType(received.head);
    if (!type)
      throw new HttpError(
        415,
        `${JSON.stringify(excerpt(received.fileName))} is not a recognised audio or video file (WAV, RF64, AIFF, FLAC, Ogg, MP3, MP4/MOV, Matroska/WebM)`,
      );
    // What the settings cannot do to this file (a bitrate for a FLAC kept FLAC, a trim of a video's
    // soundtrack): refused now, before the upload is kept, not as a FAILED media later.
    const inputIssues = checkSettingsForInput(settings, part, type);
    if (inputIssues.length > 0) throw unprocessable(inputIssues);
    await ctx.room?.check(type, received.size, received.incoming.localPath, settings);
    const applied = { ...SETTINGS_DEFAULTS, ...settings };
    await received.incoming.keep();
    kept = true;
    const record = await ctx.records.create(uid, {
      file_name: received.fileName,
      enhancement_params: { ...applied, transcode: applied.transcode ?? null },
      internal: { source: kind, settings: applied, input: type },
      ...(kind === 'video'
        ? { enhancement_level: applied.enhancement_level, enhancement_model: applied.enhancement_model }
        : {}),
    });
    await startJob(record, ctx);
    return { status: 201, body: publicMetadata(record) };
  } catch (err) {
    if (kept) await forgetKept(uid, ctx);
    else await received.incoming.discard();
    throw err;
  }
}

/**
 * An upload kept as its media's input whose acceptance failed after (its record not written, or its job
 * not started): undone in order, the record first. The input goes only once no record points at it (never
 * made, or removed by startJob); while one may (its removal failed, the records cannot be read), the input
 * stays with it, PENDING, for the queue's check of unqueued media, and the caller's error still says so.
 */
async function forgetKept(uid: string, ctx: RouteContext): Promise<void> {
  const recorded = await ctx.records.get(uid).then(
    (record) => record !== undefined,
    () => true,
  );
  if (!recorded) await ctx.files.remove(uid).catch(() => undefined);
}

/**
 * GET /v2/medias/{uid}/metadata, and with `?wait=<s>` (the waiting-metadata extension, when offered) held
 * until the media's state changes, `<s>` seconds pass or the caller leaves: then answered as it stands.
 */
export async function metadata(
  uid: string,
  query: URLSearchParams,
  ctx: RouteContext,
  callerLeft: AbortSignal,
  /** Takes a place for one held wait of the caller's key; false: none left, answer at once. */
  mayHold: () => boolean = () => true,
): Promise<JsonAnswer> {
  const waits = ctx.metadataWaitS > 0 ? query.getAll(METADATA_WAIT_PARAM) : [];
  const issues = waits.length > 0 ? checkMetadataWait(waits, ctx.metadataWaitS) : [];
  if (issues.length > 0) throw unprocessable(issues);
  const record = await known(uid, ctx);
  ctx.retention.asked(uid);
  if (waits.length > 0) {
    const state = record.enhancement_status;
    if ((state === 'PENDING' || state === 'PROCESSING') && mayHold()) {
      // A timer of our own, not AbortSignal.timeout: inside AbortSignal.any, Node 20 may collect that
      // signal as garbage before it fires, and the request would be held for ever (nodejs/node#57736).
      const waitEnded = new AbortController();
      const timer = setTimeout(() => waitEnded.abort(), Number(waits[0]) * 1000);
      try {
        await ctx.records.stateChange(uid, state, AbortSignal.any([callerLeft, waitEnded.signal]));
      } finally {
        clearTimeout(timer);
      }
      // The record as it is now: a media removed while the answer was held is answered as it was last seen.
      return { status: 200, body: metadataJson((await ctx.records.get(uid)) ?? record) };
    }
  }
  return { status: 200, body: metadataJson(record) };
}

/**
 * The stored file a (well-formed) step names, its type and its name for the caller; 404 for an output
 * name the media was not asked for, 412 while the file is not ready (an output before COMPLETED).
 */
function servedFile(record: MediaRecord, step: string): { which: MediaFileName; type: MediaType; name: string } {
  const named = isOutputStep(step);
  if (named) {
    const asked = (record.internal.settings.outputs ?? []).map((output) => output.name);
    if (!asked.includes(step))
      throw new HttpError(
        404,
        `media ${record.uid} has no output "${step}" (step=${step}); its outputs: ${asked.length > 0 ? asked.map((n) => `"${n}"`).join(', ') : 'none beyond ENHANCED'} (and ENHANCED, PRE)`,
      );
  }
  const pre = step === 'PRE';
  const what = pre ? 'original file' : named ? `output "${step}"` : 'enhanced file';
  const type = pre
    ? record.internal.input
    : named
      ? record.internal.outputs?.find((output) => output.name === step)?.type
      : record.internal.output;
  if (!type || (!pre && record.enhancement_status !== 'COMPLETED')) {
    const why =
      record.enhancement_status === 'FAILED'
        ? `it FAILED: ${record.error?.message ?? 'no reason'}`
        : `it is ${record.enhancement_status}`;
    throw new HttpError(412, `the ${what} of media ${record.uid} is not available: ${why}`);
  }
  if (pre) return { which: 'input', type, name: record.file_name };
  return {
    which: named ? namedOutputFile(step) : 'output',
    type,
    name: processedFileName(record.file_name, named ? step : 'enhanced', type.ext),
  };
}

/**
 * GET /v2/medias/{uid}/file?step=ENHANCED|PRE|<output name>, with Range support so a broken download can
 * resume. A name is one of the media's extra outputs (several-outputs), served as ENHANCED is.
 */
export async function file(
  req: IncomingMessage,
  res: ServerResponse,
  uid: string,
  query: URLSearchParams,
  ctx: RouteContext,
  headers: Record<string, string>,
): Promise<void> {
  const steps = query.getAll('step');
  const issues: FieldIssue[] =
    steps.length > 1
      ? [{ loc: ['query', 'step'], msg: 'a single value is required', type: 'value_error', input: steps }]
      : checkStep(steps[0]);
  if (issues.length > 0) throw unprocessable(issues);
  const step = steps[0] ?? 'ENHANCED';
  const record = await known(uid, ctx);
  ctx.retention.asked(uid);
  const { which, type, name } = servedFile(record, step);
  const size = await ctx.files.size(uid, which);
  const fileHeaders = {
    ...headers,
    'content-type': type.contentType,
    'content-disposition': contentDisposition(name),
    'accept-ranges': 'bytes',
  };
  const range = parseRange(req.headers.range, size);
  if (range === 'unsatisfiable')
    throw new HttpError(416, `the range ${req.headers.range} is outside the file's ${size} bytes`, {
      'content-range': `bytes */${size}`,
    });
  if (range) {
    await writeAnswer(
      res,
      206,
      { ...fileHeaders, 'content-range': `bytes ${range.start}-${range.end}/${size}` },
      { length: range.end - range.start + 1, open: () => ctx.files.read(uid, which, range.start, range.end) },
      ctx.faults,
    );
  } else {
    const whole = { length: size, open: () => ctx.files.read(uid, which, 0, size - 1) };
    await writeAnswer(res, 200, fileHeaders, whole, ctx.faults);
  }
}

/**
 * GET /v2/medias/{uid}/loudness (a local-engine extension): the report saved when the media was processed.
 * Every answer says in LOUDNESS_REPORT_HEADER what it is, so a client tells "no such media" and "no
 * report for it" from a service without this route, which answers 404 too.
 */
export async function loudness(
  uid: string,
  ctx: RouteContext,
): Promise<{ body: Buffer; headers: Record<string, string> }> {
  const said = (answer: LoudnessReportAnswer) => ({ [LOUDNESS_REPORT_HEADER]: answer });
  const refuse = (answer: LoudnessReportAnswer, detail: string) =>
    new HttpError(LOUDNESS_REPORT_ANSWERS[answer], detail, said(answer));
  const record = await ctx.records.get(uid);
  if (!record) throw refuse('unknown-media', `no media with uid "${uid.slice(0, 100)}"`);
  ctx.retention.asked(uid);
  const status = record.enhancement_status;
  if (status === 'PENDING' || status === 'PROCESSING')
    throw refuse('pending', `the loudness report of media ${uid} is not available: it is ${status}`);
  const body = status === 'COMPLETED' ? await ctx.files.loudnessReportJson(uid) : undefined;
  if (!body) {
    const why =
      status === 'FAILED'
        ? `it FAILED: ${record.error?.message ?? 'no reason'}`
        : 'its processing measured no loudness (the processor copies media, or the video has no audio)';
    throw refuse('none', `media ${uid} has no loudness report: ${why}`);
  }
  return { body, headers: said('ready') };
}

/**
 * Hands an accepted media to its job. When that fails (the shared queue is unreachable) the media is
 * taken back, so the caller's error answer is the whole truth: nothing was accepted.
 */
async function startJob(record: MediaRecord, ctx: RouteContext): Promise<void> {
  try {
    await ctx.jobs.start(record);
  } catch (err) {
    // If even that fails, the media stays PENDING on record and the queue's check of unqueued media takes it up.
    await ctx.records.remove(record.uid).catch(() => undefined);
    throw err;
  }
}

async function known(uid: string, ctx: RouteContext): Promise<MediaRecord> {
  const record = await ctx.records.get(uid);
  if (!record) throw new HttpError(404, `no media with uid "${uid.slice(0, 100)}"`);
  return record;
}

function parseSettings(raw: string | undefined, part: 'media_enhancement' | 'video_enhancement'): EnhancementSettings {
  if (raw === undefined || raw.trim() === '' || raw.trim() === 'null') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw unprocessable([
      {
        loc: ['body', part],
        msg: `invalid JSON: ${(err as Error).message}`,
        type: 'value_error.jsondecode',
        input: raw.slice(0, 200),
      },
    ]);
  }
  const issues = checkEnhancementSettings(value, part);
  if (issues.length > 0) throw unprocessable(issues);
  return value ?? {};
}

async function readText(req: IncomingMessage, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > limit) throw new HttpError(413, `the JSON body is larger than ${limit} bytes`, { connection: 'close' });
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | undefined {
  const match = /^bytes=(\d*)-(\d*)$/.exec(header?.trim() ?? '');
  if (!match || (match[1] === '' && match[2] === '')) return undefined; // absent or a form not served: the whole file
  let start: number;
  let end: number;
  if (match[1] === '') {
    start = Math.max(0, size - Number(match[2]));
    end = size - 1;
  } else {
    start = Number(match[1]);
    end = match[2] === '' ? size - 1 : Math.min(Number(match[2]), size - 1);
  }
  if (start >= size || start > end) return 'unsatisfiable';
  return { start, end };
}
