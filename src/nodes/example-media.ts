// The sample media shipped in examples/, and the live microphone page in resources/, made known to flows
// through environment variables (`$env("MEDIA_ENHANCE_SAMPLE_AUDIO")` in an inject node), so the examples
// run wherever the package is installed. A value the user already set is kept.
import { join } from 'node:path';
import { LIVE_PAGE_FILE } from '../live-page/page-html';

const ROOT = join(__dirname, '..', '..', '..');
const EXAMPLES = join(ROOT, 'examples');

export const EXAMPLE_MEDIA = {
  MEDIA_ENHANCE_SAMPLE_AUDIO: join(EXAMPLES, 'speech-sample.wav'),
  MEDIA_ENHANCE_SAMPLE_VIDEO: join(EXAMPLES, 'video-sample.mp4'),
  /** A short piece of music, the intro and outro of the "Publish an episode" example. */
  MEDIA_ENHANCE_SAMPLE_MUSIC: join(EXAMPLES, 'music-sample.mp3'),
  /** The page of the "Hear your microphone cleaned" example, written by the build. */
  MEDIA_ENHANCE_LIVE_PAGE: join(ROOT, 'resources', LIVE_PAGE_FILE),
};

export function publishExampleMedia(): void {
  for (const [name, path] of Object.entries(EXAMPLE_MEDIA)) process.env[name] ??= path;
}
