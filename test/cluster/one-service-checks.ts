// What "answers as one service" means, checked the same way whatever the instances keep their media on
// (one-service.test.ts: a shared data folder; redis-and-s3.test.ts: an S3 bucket).
import assert from 'node:assert/strict';
import { makeWav } from '../fixtures/media';
import { followToEnd, getBytes, getJson, secondsOf, sha256, uploadWav } from './engine-cluster';

/** A media the cluster accepted, with what it must give back. */
export interface KeptMedia {
  uid: string;
  original: Buffer;
  enhancedSha: string;
}

/**
 * Six WAVs uploaded round robin over three instances: each is followed to its end on the next instance,
 * and its original (byte for byte), its enhanced file (whole, by ffprobe) and its loudness report are
 * fetched from the one after. `folder` takes the files ffprobe reads.
 */
export async function uploadsSpreadOverThree(urls: string[], folder: string): Promise<KeptMedia[]> {
  const originals = [1, 1.25, 1.5, 1.75, 2, 2.25].map((seconds) => makeWav(seconds, 48_000));
  const uploads = await Promise.all(originals.map((wav, i) => uploadWav(urls[i % 3], wav, `take-${i}.wav`)));
  const kept: KeptMedia[] = [];
  for (const [i, upload] of uploads.entries()) {
    assert.equal(upload.status, 201, JSON.stringify(upload.body));
    const uid = upload.body.uid as string;
    const ended = await followToEnd([urls[(i + 1) % 3]], uid);
    assert.equal(ended.enhancement_status, 'COMPLETED', JSON.stringify(ended));
    const third = urls[(i + 2) % 3];
    const pre = await getBytes(`${third}/v2/medias/${uid}/file?step=PRE`);
    assert.equal(pre.status, 200);
    assert.equal(sha256(pre.body), sha256(originals[i]), `the original of media ${i} is intact`);
    const enhanced = await getBytes(`${third}/v2/medias/${uid}/file`);
    assert.equal(enhanced.status, 200);
    const seconds = (originals[i].length - 44) / 2 / 48_000;
    // Whole: ffprobe finds every second the original had.
    const duration = await secondsOf(enhanced.body, folder);
    assert.ok(Math.abs(duration - seconds) < 0.01, `media ${i}: ${duration} s enhanced, ${seconds} s uploaded`);
    const report = await getJson(`${urls[i % 3]}/v2/medias/${uid}/loudness`);
    assert.equal(report.status, 200);
    assert.equal(report.body.uid, uid);
    kept.push({ uid, original: originals[i], enhancedSha: sha256(enhanced.body) });
  }
  return kept;
}

/** The instance at `url` answers every media COMPLETED and gives back its original and enhanced file byte for byte. */
export async function servesEvery(url: string, media: KeptMedia[]): Promise<void> {
  for (const { uid, original, enhancedSha } of media) {
    const metadata = await getJson(`${url}/v2/medias/${uid}/metadata`);
    assert.equal(metadata.body.enhancement_status, 'COMPLETED');
    assert.equal(sha256((await getBytes(`${url}/v2/medias/${uid}/file?step=PRE`)).body), sha256(original));
    assert.equal(sha256((await getBytes(`${url}/v2/medias/${uid}/file`)).body), enhancedSha);
  }
}
