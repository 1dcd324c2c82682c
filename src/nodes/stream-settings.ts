// The enhance stream node's settings and a message's format, read and checked: every error names the
// setting or msg property, the value and the rule (input-error.ts).
import { inputError, type InputField } from './input-error';
import type { NodeDef, NodeMessage } from './red';
import type { Translate } from './texts';
import { ENCODINGS, STREAM_CHANNELS, STREAM_RATE, type PcmEncoding, type PcmFormat } from '../stream/pcm-format';
import { STREAM_MODELS, type StreamModel } from '../stream/live-stream';

export interface StreamNodeSettings {
  format: PcmFormat;
  model: StreamModel;
  /** 1..100, as the files take it. */
  level: number;
  /** A stream idle this long ends: its next chunk starts it afresh. */
  gapMs: number;
  /**
   * The longest a chunk may wait for its thread (the time the audio ahead of it takes this machine to
   * clear, by the model's measured speed): a chunk that would wait longer is refused.
   */
  backlogMs: number;
  /** The most streams open at once: a new topic past it is refused. */
  maxStreams: number;
}

export const DEFAULT_GAP_SECONDS = 5;
/**
 * 5 s: a 10 s burst (a replayed recording, a file read in chunks) is taken whole by either model before
 * this process has measured it (KNOWN_SPEEDS in wait-estimate.ts), and a live source on a machine too
 * slow for it is refused before its output runs more than a few seconds late. Until the backlog was a
 * wait, it was 1000 ms of audio, which refused everything after a burst's first second.
 */
export const DEFAULT_BACKLOG_MS = 5000;
export const DEFAULT_MAX_STREAMS = 64;
export const GAP_SECONDS = { min: 0.1, max: 3600 } as const;
export const BACKLOG_MS = { min: 20, max: 60000 } as const;
export const MAX_STREAMS = { min: 1, max: 1000 } as const;
export const LEVEL = { min: 1, max: 100 } as const;

/** Each setting's label as errors name it. */
function labels(t: Translate): Record<string, string> {
  return {
    model: t('media-enhance-stream.setting.model'),
    enhancementLevel: t('media-enhance-stream.setting.enhancementLevel'),
    rate: t('media-enhance-stream.setting.rate'),
    channels: t('media-enhance-stream.setting.channels'),
    encoding: t('media-enhance-stream.setting.encoding'),
    gap: t('media-enhance-stream.setting.gap'),
    backlog: t('media-enhance-stream.setting.backlog'),
    maxStreams: t('media-enhance-stream.setting.maxStreams'),
  };
}

function setting(t: Translate, prop: string): InputField {
  return { prop, label: labels(t)[prop] };
}

/** A setting left empty (or blank, as the editor takes it) takes its default; else a number within bounds. */
function numberSetting(
  t: Translate,
  def: NodeDef,
  prop: string,
  fallback: number,
  bounds: { min: number; max: number },
  integer: boolean,
): number {
  const raw = def[prop];
  if (raw === undefined || raw === null || (typeof raw === 'string' && raw.trim() === '')) return fallback;
  const value = typeof raw === 'string' ? Number(raw.trim()) : raw;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    (integer && !Number.isInteger(value)) ||
    value < bounds.min ||
    value > bounds.max
  )
    throw inputError(
      t,
      setting(t, prop),
      raw,
      integer
        ? t('media-enhance-stream.rule.wholeNumber', { min: bounds.min, max: bounds.max })
        : t('media-enhance-stream.rule.number', { min: bounds.min, max: bounds.max }),
    );
  return value;
}

function checkRate(t: Translate, field: InputField, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < STREAM_RATE.min || value > STREAM_RATE.max)
    throw inputError(
      t,
      field,
      value,
      t('media-enhance-stream.rule.rate', { min: STREAM_RATE.min, max: STREAM_RATE.max }),
    );
  return value;
}

function checkChannels(t: Translate, field: InputField, value: unknown): number {
  if (!(STREAM_CHANNELS as readonly unknown[]).includes(value))
    throw inputError(t, field, value, t('media-enhance-stream.rule.channels'));
  return value as number;
}

function checkEncoding(t: Translate, field: InputField, value: unknown): PcmEncoding {
  if (!(ENCODINGS as readonly unknown[]).includes(value))
    throw inputError(t, field, value, t('media-enhance-stream.rule.oneOf', { values: ENCODINGS.join(', ') }));
  return value as PcmEncoding;
}

/** Editor values are strings; a number-like one is a number. */
function numeric(value: unknown): unknown {
  return typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : value;
}

export function readStreamSettings(t: Translate, def: NodeDef): StreamNodeSettings {
  const model = def.model === undefined || def.model === '' ? 'FINCH' : def.model;
  if (!(STREAM_MODELS as readonly unknown[]).includes(model))
    throw inputError(
      t,
      setting(t, 'model'),
      model,
      t('media-enhance-stream.rule.oneOf', { values: STREAM_MODELS.join(', ') }),
    );
  const orDefault = (prop: string, fallback: unknown) =>
    def[prop] === undefined || def[prop] === '' ? fallback : numeric(def[prop]);
  return {
    format: {
      rate: checkRate(t, setting(t, 'rate'), orDefault('rate', 16000)),
      channels: checkChannels(t, setting(t, 'channels'), orDefault('channels', 1)),
      encoding: checkEncoding(t, setting(t, 'encoding'), orDefault('encoding', 's16le')),
    },
    model: model as StreamModel,
    level: numberSetting(t, def, 'enhancementLevel', 100, LEVEL, true),
    gapMs: numberSetting(t, def, 'gap', DEFAULT_GAP_SECONDS, GAP_SECONDS, false) * 1000,
    backlogMs: numberSetting(t, def, 'backlog', DEFAULT_BACKLOG_MS, BACKLOG_MS, true),
    maxStreams: numberSetting(t, def, 'maxStreams', DEFAULT_MAX_STREAMS, MAX_STREAMS, true),
  };
}

/** The message's format: msg.format's members over the node's; absent members keep the node's. */
export function readFormat(t: Translate, msg: NodeMessage, configured: PcmFormat): PcmFormat {
  const given = msg.format;
  if (given === undefined || given === null) return configured;
  if (typeof given !== 'object' || Array.isArray(given))
    throw inputError(t, 'msg.format', given, t('media-enhance-stream.rule.format'));
  const format = given as Record<string, unknown>;
  return {
    rate: format.rate === undefined ? configured.rate : checkRate(t, 'msg.format.rate', format.rate),
    channels:
      format.channels === undefined ? configured.channels : checkChannels(t, 'msg.format.channels', format.channels),
    encoding:
      format.encoding === undefined ? configured.encoding : checkEncoding(t, 'msg.format.encoding', format.encoding),
  };
}
