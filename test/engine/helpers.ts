// Black-box helpers: the test engine (test/fixtures/test-engine.ts) as these tests start it, and raw HTTP to it.
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import FormData from 'form-data';
import { request } from 'undici';
import type { EngineOptions } from '../../src/engine';
import { KEY, startTestEngine as startSharedTestEngine, type TestEngine } from '../fixtures/test-engine';
import type { EngineJson } from './answers';

export { KEY, OTHER_KEY, type TestEngine } from '../fixtures/test-engine';

/** A valid enhance-json body without its URL: each test adds the `file_download_url` it serves. */
export const AUDIO_BODY = {
  file_name: 'talk.wav',
  loudness_target_level: -16,
  loudness_peak_limit: -1,
  enhancement_level: 1,
  transcode_kind: null,
  model_arch: 'LARK_V2',
};

/** A test engine for black-box tests: they poll fast, so metadata reads are not limited unless a test sets that limit. */
export function startTestEngine(options: Partial<EngineOptions> = {}, dataDir?: string): Promise<TestEngine> {
  return startSharedTestEngine({ ...options, limits: { getMetadata: 100_000, ...options.limits } }, dataDir);
}

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body as JSON; undefined when it is not JSON. */
  json: EngineJson;
  bytes: Buffer;
}

export async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer | NodeJS.ReadableStream } = {},
): Promise<Answer> {
  const res = await request(url, {
    method: (init.method ?? 'GET') as 'GET',
    headers: init.headers,
    body: init.body as Buffer,
  });
  const bytes = Buffer.from(await res.body.arrayBuffer());
  const text = bytes.toString('utf8');
  let json: EngineJson;
  try {
    json = JSON.parse(text) as EngineJson;
  } catch {
    json = undefined as unknown as EngineJson; // not JSON: a test that reads it fails on its assertion
  }
  return { status: res.statusCode, headers: res.headers, text, json, bytes };
}

/** A multipart upload as a client would send it. */
export function multipart(
  file: Buffer | undefined,
  fileName: string,
  parts: Record<string, string> = {},
): { body: Buffer; headers: Record<string, string> } {
  const form = new FormData();
  if (file) form.append('file', file, { filename: fileName, contentType: 'application/octet-stream' });
  for (const [name, value] of Object.entries(parts)) form.append(name, value);
  return { body: form.getBuffer(), headers: form.getHeaders() };
}

export async function upload(
  engine: TestEngine,
  file: Buffer,
  fileName: string,
  parts: Record<string, string> = {},
  path = '/v2/medias',
  key = KEY,
): Promise<Answer> {
  const { body, headers } = multipart(file, fileName, parts);
  return call(`${engine.url}${path}`, { method: 'POST', headers: { ...headers, 'x-api-key': key }, body });
}

export async function metadata(engine: TestEngine, uid: string, key = KEY): Promise<Answer> {
  return call(`${engine.url}/v2/medias/${encodeURIComponent(uid)}/metadata`, { headers: { 'x-api-key': key } });
}

/** Polls (quickly: a test, not a client) until the media leaves PENDING/PROCESSING. */
export async function settled(engine: TestEngine, uid: string, timeoutMs = 10_000): Promise<EngineJson> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const { json } = await metadata(engine, uid);
    if (json.enhancement_status === 'COMPLETED' || json.enhancement_status === 'FAILED') return json;
    if (Date.now() > end) throw new Error(`media ${uid} still ${json.enhancement_status}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Media folders the engine made (none for a refused request) and what is left of uploads in progress. */
export async function stored(engine: TestEngine): Promise<{ media: string[]; incoming: string[] }> {
  const root = join(engine.dataDir, 'media');
  return {
    media: (await fsp.readdir(root)).filter((n) => n !== '.incoming'),
    incoming: await fsp.readdir(join(root, '.incoming')),
  };
}
