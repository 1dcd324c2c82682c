// The "Publish an episode" example as Node-RED runs it, as shipped: the speech sample as the raw episode
// and the music sample as intro and outro, through enhance file and the built-in engine, into a WAV master
// and a levelled MP3 for the feed in one message, pauses trimmed. Each file measured with ffmpeg.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { exampleFlows } from '../fixtures/example-flows';
import { ffmpegLoudness, ffmpegLoudnessBetween, probe } from '../fixtures/ffmpeg';
import { helper, initHelper, nextInput, NODE_MODULES, placed, stopHelper, unloadFlow } from './flow-helper';

const ROOT = join(__dirname, '..', '..', '..');
const CORE = ['common/20-inject.js', 'common/21-debug.js', 'common/90-comment.js'];
const MODULES: unknown[] = [
  ...NODE_MODULES,
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- Node-RED's core nodes
  ...CORE.map((path) => require(`@node-red/nodes/core/${path}`) as unknown),
];

type Published = {
  name: string;
  path: string;
  format: string;
  episode: { episode_start_s: number; duration_s: number; intro?: unknown; outro?: unknown };
};

describe('example: publish an episode', function () {
  this.timeout(300_000);
  let userDir: string;
  before(async () => (userDir = await initHelper()));
  afterEach(() => unloadFlow());
  after(() => stopHelper());

  it('turns the raw episode, an intro and an outro into a WAV master and a levelled MP3 in one message', async () => {
    const flow = exampleFlows(join(ROOT, 'examples')).filter(
      (node) =>
        node.id.startsWith('me-ex7-') ||
        node.id === 'me-example-engine' ||
        node.id === 'me-example-tab-publish-an-episode',
    );
    assert.ok(flow.length >= 5, 'the example is there');
    // A helper node beside the debug node hears the message.
    const publish = flow.find((node) => node.type === 'media-enhance-file')!;
    (publish.wires as string[][])[0].push('heard');
    flow.push({ id: 'heard', type: 'helper', z: publish.z });
    await helper.load(MODULES, placed(flow));
    const heard = nextInput(helper.getNode('heard'), 240_000);
    helper.getNode(flow.find((node) => node.type === 'inject')!.id).receive({});
    const msg = await heard;

    const files = msg.files as Published[];
    assert.deepEqual(
      files.map((file) => [file.name, file.format, file.path]),
      [
        ['enhanced', 'wav', join(userDir, 'outbox', 'episode-master.wav')],
        ['feed', 'mp3', join(userDir, 'outbox', 'episode-feed.mp3')],
      ],
    );
    const feed = (await probe(files[1].path)).streams[0];
    assert.deepEqual([feed.codec_name, feed.bit_rate, feed.sample_rate], ['mp3', '128000', '44100']);
    for (const file of files) {
      assert.ok(file.episode.intro && file.episode.outro, `${file.name}: intro and outro joined`);
      const whole = await ffmpegLoudness(file.path);
      assert.ok(Math.abs(whole.integratedLufs + 16) <= 0.5, `${file.name}: ${whole.integratedLufs} LUFS, target -16`);
      assert.ok(whole.truePeakDbtp <= -1 + 0.1, `${file.name}: true peak ${whole.truePeakDbtp} dBTP`);
      // The episode alone (after the intro's crossfade, before the outro's).
      const { episode_start_s: start, duration_s: duration } = file.episode;
      const episode = await ffmpegLoudnessBetween(file.path, start + 1, duration - 7);
      assert.ok(Math.abs(episode + 16) <= 0.5, `${file.name} episode: ${episode} LUFS`);
    }
    const params = (msg.media as { enhancement_params: Record<string, unknown> }).enhancement_params;
    assert.ok(params.pauses_trimmed, 'the pauses were looked at and the report says what was cut');
  });
});
