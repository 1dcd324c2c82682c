// The example flows as files: what Import > Examples offers and what npm start deploys.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  deployedId,
  deployExamples,
  EXAMPLES_STAMP,
  exampleFlows,
  type FlowNode,
} from '../fixtures/example-flows';

const EXAMPLES = join(__dirname, '..', '..', '..', 'examples');
const CORE_TYPES = new Set([
  'comment',
  'inject',
  'debug',
  'catch',
  'switch',
  'change',
  'trigger',
  'delay',
  'function',
  'watch',
  'file in',
  'file',
  'join',
  'http in',
  'http response',
  'websocket in',
  'websocket out',
  'websocket-listener',
  'status',
]);

describe('example flows', () => {
  const files = readdirSync(EXAMPLES).filter((f) => f.endsWith('.json'));

  it('are eight, each explained by a comment node, using only core nodes and ours', () => {
    assert.equal(files.length, 8);
    for (const file of files) {
      const nodes = JSON.parse(readFileSync(join(EXAMPLES, file), 'utf8')) as FlowNode[];
      assert.ok(
        nodes.some((n) => n.type === 'comment' && typeof n.info === 'string' && n.info.length > 100),
        `${file} has a comment that explains it`,
      );
      for (const node of nodes)
        assert.ok(CORE_TYPES.has(node.type) || node.type.startsWith('media-enhance-'), `${file}: ${node.type}`);
      const ids = nodes.map((n) => n.id);
      assert.equal(new Set(ids).size, ids.length, `${file}: unique ids`);
      for (const node of nodes) {
        for (const output of (node.wires as string[][] | undefined) ?? [])
          for (const target of output)
            assert.ok(ids.includes(target), `${file}: ${node.id} is wired to ${target}, which exists`);
      }
    }
  });

  const example = (prefix: string) =>
    JSON.parse(
      readFileSync(
        join(
          EXAMPLES,
          files.find((f) => f.startsWith(prefix))!,
        ),
        'utf8',
      ),
    ) as FlowNode[];

  it('watch a folder: audio and video go through enhance file, then out of inbox/; any other file gets a log line that says why', () => {
    const nodes = example('02');
    const byId = new Map(nodes.map((n) => [n.id, n]));
    // Where a settled file goes: the switch on its name, as Node-RED evaluates the rules (first match).
    const route = (filename: string) => {
      const kind = nodes.find((n) => n.type === 'switch' && n.property === 'filename')!;
      const rules = kind.rules as Array<{ t: string; v?: string; case?: boolean }>;
      const index = rules.findIndex(
        (rule) => rule.t === 'else' || new RegExp(rule.v!, rule.case ? 'i' : '').test(filename),
      );
      return (kind.wires as string[][])[index].map((id) => byId.get(id)!);
    };
    for (const media of [
      'talk.wav',
      'Talk.WAV',
      'show.mp3',
      'take.flac',
      'memo.m4a',
      'old.aiff',
      'clip.mp4',
      'Clip.MOV',
      'talk.mkv',
      'screen.webm',
    ]) {
      assert.deepEqual(
        route(media).map((n) => n.type),
        ['media-enhance-file'],
        media,
      );
    }
    for (const other of ['notes.txt', 'cover.jpg', 'README']) {
      const [why] = route(other);
      assert.equal(why.type, 'change', other);
      const log = byId.get((why.wires as string[][])[0][0])!;
      assert.equal(log.type, 'debug');
      assert.equal(log.console, true, 'skipped files reach the Node-RED log');
      assert.match(JSON.stringify(why.rules), /skipped .* not an audio file .* or a video/);
    }
    // Done or failed, the input is moved out of inbox/ by the same node, which says which.
    const enhance = nodes.find((n) => n.type === 'media-enhance-file')!;
    const failures = nodes.find((n) => n.type === 'catch')!;
    assert.deepEqual(failures.scope, [enhance.id], "the Catch node takes the enhance node's failures only");
    const [mover] = (enhance.wires as string[][])[0].map((id) => byId.get(id)!);
    assert.deepEqual(failures.wires, enhance.wires);
    assert.equal(mover.type, 'function');
    assert.match(String(mover.func), /'failed' : 'done'/);
  });

  it('the two examples on the speech sample write different files', () => {
    const download = (prefix: string) => example(prefix).find((n) => n.type === 'media-enhance-download')!;
    assert.equal(download('01').fileName, '', 'example 1 keeps the name the service gives: speech-sample_enhanced.wav');
    assert.equal(download('03').fileName, 'speech-from-url_enhanced.wav');
    assert.equal(download('01').folder, download('03').folder);
  });

  describe('as npm start adds them to a user dir', () => {
    let userDir: string;
    const flowFile = () => join(userDir, 'flows.json');
    const readFlows = () => JSON.parse(readFileSync(flowFile(), 'utf8')) as FlowNode[];
    const writeFlows = (flows: FlowNode[]) => writeFileSync(flowFile(), JSON.stringify(flows));
    beforeEach(() => (userDir = mkdtempSync(join(tmpdir(), 'examples-user-dir-'))));
    afterEach(() => rmSync(userDir, { recursive: true, force: true }));

    it('adds every example once, on tabs of their own, sharing one built-in engine, and says so', () => {
      const log = deployExamples(userDir, EXAMPLES);
      const flows = readFlows();
      assert.equal(flows.filter((n) => n.type === 'tab').length, 8);
      assert.equal(
        flows.filter((n) => n.type === 'media-enhance-config').length,
        1,
        'one built-in engine shared by every example',
      );
      assert.equal(
        log.filter((line) => /^added the example ".+" \(\d+ nodes\) on a tab of its own$/.test(line)).length,
        8,
      );
      assert.equal(deployExamples(userDir, EXAMPLES).length, 0, 'a second start adds nothing');
      assert.deepEqual(readFlows(), flows);
    });

    it('never overwrites what the user changed, and never brings back what they deleted', () => {
      deployExamples(userDir, EXAMPLES);
      const flows = readFlows();
      const tabs = flows.filter((n) => n.type === 'tab');
      // The user renames a node, points the shared config node at a remote service, deletes one
      // example's tab with its nodes, and adds a flow of their own.
      const renamed = flows.find((n) => n.type === 'media-enhance-upload')!;
      renamed.name = 'my own name';
      const config = flows.find((n) => n.type === 'media-enhance-config')!;
      config.mode = 'remote';
      config.baseUrl = 'https://127.0.0.1:8443';
      const deletedTab = tabs[1].id;
      const mine = [
        ...flows.filter((n) => n.id !== deletedTab && n.z !== deletedTab),
        { id: 'my-tab', type: 'tab', label: 'mine' },
        { id: 'my-inject', type: 'inject', z: 'my-tab' },
      ];
      writeFlows(mine);
      assert.deepEqual(deployExamples(userDir, EXAMPLES), []);
      assert.deepEqual(readFlows(), mine);
      // Deleting the config node too: it does not come back either.
      const withoutConfig = mine.filter((n) => n.type !== 'media-enhance-config');
      writeFlows(withoutConfig);
      deployExamples(userDir, EXAMPLES);
      assert.deepEqual(readFlows(), withoutConfig);
    });

    it('adds an example that is new in this version, and only that one', () => {
      deployExamples(userDir, EXAMPLES);
      // As the previous version left it: one example fewer in the flows and in the stamp.
      const newTab = readFlows().filter((n) => n.type === 'tab')[2];
      const older = readFlows().filter((n) => n.id !== newTab.id && n.z !== newTab.id);
      writeFlows(older);
      const stamp = JSON.parse(readFileSync(join(userDir, EXAMPLES_STAMP), 'utf8')) as { added: string[] };
      writeFileSync(
        join(userDir, EXAMPLES_STAMP),
        JSON.stringify({ added: stamp.added.filter((id) => older.some((n) => n.id === id)) }),
      );
      const log = deployExamples(userDir, EXAMPLES);
      assert.equal(log.length, 1);
      assert.match(log[0], new RegExp(`^added the example "${newTab.label as string}"`));
      assert.equal(readFlows().filter((n) => n.type === 'tab').length, 8);
    });

    it('adds them under ids of their own, so that Import > Examples meets none of them, wired as in the files', () => {
      deployExamples(userDir, EXAMPLES);
      const deployed = readFlows().filter((n) => n.type !== 'tab');
      const fileIds = new Set(exampleFlows(EXAMPLES).map((n) => n.id));
      assert.deepEqual(
        deployed.filter((n) => fileIds.has(n.id)).map((n) => n.id),
        [],
        'no deployed node has an id of the files',
      );
      const deployedIds = new Set(deployed.map((n) => n.id));
      for (const file of exampleFlows(EXAMPLES).filter((n) => n.type !== 'tab')) {
        const node = deployed.find((n) => n.id === deployedId(file.id));
        assert.ok(node, `${file.id} is deployed as ${deployedId(file.id)}`);
        const targets = ((node.wires as string[][] | undefined) ?? []).flat();
        assert.deepEqual(targets, ((file.wires as string[][] | undefined) ?? []).flat().map(deployedId));
        for (const target of targets) assert.ok(deployedIds.has(target), `${node.id} is wired to ${target}`);
        if (typeof file.service === 'string') assert.equal(node.service, deployedId(file.service));
        if (typeof file.server === 'string') assert.equal(node.server, deployedId(file.server), 'a websocket node');
        for (const key of ['scope', 'links'])
          if (Array.isArray(file[key])) assert.deepEqual(node[key], (file[key] as string[]).map(deployedId));
      }
    });

    it('in a user dir where an earlier version added the examples under the files\' ids, adds none again', () => {
      const earlier = exampleFlows(EXAMPLES);
      writeFlows(earlier);
      writeFileSync(join(userDir, EXAMPLES_STAMP), JSON.stringify({ added: earlier.map((n) => n.id) }));
      assert.deepEqual(deployExamples(userDir, EXAMPLES), []);
      assert.deepEqual(readFlows(), earlier);
    });

    it('in a user dir made before examples were remembered, keeps the example nodes the flows hold as they are', () => {
      const flows = exampleFlows(EXAMPLES);
      flows.find((n) => n.type === 'media-enhance-download')!.name = 'renamed before the update';
      writeFlows(flows);
      assert.deepEqual(deployExamples(userDir, EXAMPLES), []);
      assert.deepEqual(readFlows(), flows);
    });
  });
});
