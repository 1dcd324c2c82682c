// The sample media shipped in examples/, made known to flows through environment variables
// (`$env("MEDIA_ENHANCE_SAMPLE_AUDIO")` in an inject node), so the examples run wherever the package
// is installed. A value the user already set is kept.
import { join } from 'node:path';

const EXAMPLES = join(__dirname, '..', '..', '..', 'examples');

export const EXAMPLE_MEDIA = {
  MEDIA_ENHANCE_SAMPLE_AUDIO: join(EXAMPLES, 'speech-sample.wav'),
  MEDIA_ENHANCE_SAMPLE_VIDEO: join(EXAMPLES, 'video-sample.mp4'),
  /** A short piece of music, the intro and outro of the "Publish an episode" example. */
  MEDIA_ENHANCE_SAMPLE_MUSIC: join(EXAMPLES, 'music-sample.mp3'),
};

export function publishExampleMedia(): void {
  for (const [name, path] of Object.entries(EXAMPLE_MEDIA)) process.env[name] ??= path;
}
