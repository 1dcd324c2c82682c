// The flow a user builds to enhance every file dropped into a folder, deployed by the soak:
//
//   watch inbox/ -> still there? -> settled 2 s -+
//   sweep inbox/ (at start, every 30 s) ---------+-> claim (move to work/) -> upload -> wait
//     -> download the original (PRE, outbox/originals/) -> download enhanced (outbox/) -> file away
//     -> append {media_uid, input, output, original} to records/outputs.jsonl
//   catch (any node of the pipeline) -> file away as failed -> append {input, media_uid, code, message} to records/failures.jsonl
//
// The sweep picks up files dropped while Node-RED was down or redeploying, which the watch node cannot
// see; the claim (a rename out of inbox/) makes sure each file is taken once however many told of it.
import { join } from 'node:path';

export interface SoakFolders {
  inbox: string;
  work: string;
  done: string;
  failed: string;
  outbox: string;
  records: string;
}

export const CONFIG_ID = 'soak-service';
export const CONFIG_TYPE = 'media-enhance-config';
export const OUTPUTS_FILE = 'outputs.jsonl';
export const FAILURES_FILE = 'failures.jsonl';
/** Long enough for any media of the soak; a wait that outlasts it ends at the Catch node as TIMEOUT, not silently. */
export const WAIT_TIMEOUT_S = 240;

const TAB = 'soak-tab';
const fsLibs = [
  { var: 'fs', module: 'fs' },
  { var: 'path', module: 'path' },
];

function fn(id: string, name: string, code: string, wires: string[][], x: number, y: number): object {
  return {
    id,
    type: 'function',
    z: TAB,
    name,
    func: code,
    outputs: 1,
    timeout: 0,
    noerr: 0,
    initialize: '',
    finalize: '',
    libs: fsLibs,
    x,
    y,
    wires,
  };
}

function appendLines(id: string, name: string, file: string, x: number, y: number): object {
  return {
    id,
    type: 'file',
    z: TAB,
    name,
    filename: file,
    filenameType: 'str',
    appendNewline: true,
    createDir: true,
    overwriteFile: 'false',
    encoding: 'none',
    x,
    y,
    wires: [[]],
  };
}

/** The flow, with the engine's URL; `apiKey` only for the deploy that sets the credential. */
export function soakFlow(folders: SoakFolders, engineUrl: string, apiKey?: string): object[] {
  const dir = (name: keyof SoakFolders) => JSON.stringify(folders[name]);
  const claim = `// Whoever moves the file out of inbox/ first has it: a watch event and a sweep may name the same file.
const name = path.basename(msg.filename);
const claimed = path.join(${dir('work')}, name);
try {
    await fs.promises.rename(msg.filename, claimed);
} catch (err) {
    if (err.code === 'ENOENT') return null;
    throw err;
}
return { _msgid: msg._msgid, filename: claimed, input: name };`;
  const sweep = `// Files that came while nobody watched (Node-RED down, a deploy): every .wav unchanged for 2 s.
const now = Date.now();
for (const name of await fs.promises.readdir(${dir('inbox')})) {
    if (!name.endsWith('.wav')) continue;
    const file = path.join(${dir('inbox')}, name);
    const stat = await fs.promises.stat(file).catch(() => null);
    if (stat && stat.isFile() && now - stat.mtimeMs > 2000) node.send({ filename: file, topic: file });
}
return null;`;
  const fileAway = `await fs.promises.rename(path.join(${dir('work')}, msg.input), path.join(${dir('done')}, msg.input));
msg.payload = JSON.stringify({ media_uid: msg.media_uid, input: msg.input, output: msg.filename, original: msg.original, at: Date.now() });
return msg;`;
  const failed = `const error = msg.error || {};
const record = { input: msg.input || null, media_uid: msg.media_uid || null, code: error.code || null, message: String(error.message), node: error.source && error.source.type, at: Date.now() };
if (msg.input) {
    try {
        await fs.promises.rename(path.join(${dir('work')}, msg.input), path.join(${dir('failed')}, msg.input));
    } catch (err) {
        record.moved = err.code;
    }
}
return { payload: JSON.stringify(record) };`;
  const pipeline = [
    'soak-sweep',
    'soak-claim',
    'soak-upload',
    'soak-wait',
    'soak-original',
    'soak-keep-original',
    'soak-enhanced',
    'soak-file-away',
  ];
  return [
    { id: TAB, type: 'tab', label: 'soak: inbox -> outbox' },
    {
      id: CONFIG_ID,
      type: CONFIG_TYPE,
      name: 'soak engine',
      mode: 'remote',
      baseUrl: engineUrl,
      allowInsecureHttp: true,
      // Above the engine's own limit: the client learns the engine's from its answers (and meets 429s until it has).
      limitUpload: '40',
      limitMetadata: '',
      limitDownload: '',
      limitEnhanceAudio: '',
      limitEnhanceVideo: '',
      requestTimeout: '',
      waitTimeout: '',
      ...(apiKey === undefined ? {} : { credentials: { apiKey } }),
    },
    {
      id: 'soak-watch',
      type: 'watch',
      z: TAB,
      name: 'inbox/',
      files: folders.inbox,
      recursive: '',
      x: 110,
      y: 80,
      wires: [['soak-exists']],
    },
    {
      id: 'soak-exists',
      type: 'switch',
      z: TAB,
      name: 'still there?',
      property: 'type',
      propertyType: 'msg',
      rules: [{ t: 'eq', v: 'file', vt: 'str' }],
      checkall: 'true',
      repair: false,
      outputs: 1,
      x: 270,
      y: 80,
      wires: [['soak-settle']],
    },
    {
      id: 'soak-settle',
      type: 'trigger',
      z: TAB,
      name: 'settled for 2 s',
      op1: '',
      op2: '',
      op1type: 'nul',
      op2type: 'payl',
      duration: '2',
      extend: true,
      overrideDelay: false,
      units: 's',
      reset: '',
      bytopic: 'topic',
      topic: 'filename',
      outputs: 1,
      x: 440,
      y: 80,
      wires: [['soak-claim']],
    },
    {
      id: 'soak-tick',
      type: 'inject',
      z: TAB,
      name: 'at start, every 30 s',
      props: [],
      repeat: '30',
      crontab: '',
      once: true,
      onceDelay: '2',
      topic: '',
      x: 140,
      y: 140,
      wires: [['soak-sweep']],
    },
    fn('soak-sweep', 'sweep inbox/', sweep, [['soak-claim']], 320, 140),
    fn('soak-claim', 'claim: move to work/', claim, [['soak-upload']], 620, 110),
    {
      id: 'soak-upload',
      type: 'media-enhance-upload',
      z: TAB,
      name: '',
      service: CONFIG_ID,
      loudnessTarget: '-16',
      truePeak: '-1',
      enhancementLevel: '100',
      model: 'LARK_V2',
      transcode: '',
      x: 130,
      y: 220,
      wires: [['soak-wait']],
    },
    {
      id: 'soak-wait',
      type: 'media-enhance-wait',
      z: TAB,
      name: '',
      service: CONFIG_ID,
      timeout: String(WAIT_TIMEOUT_S),
      x: 310,
      y: 220,
      wires: [['soak-original']],
    },
    {
      id: 'soak-original',
      type: 'media-enhance-download',
      z: TAB,
      name: 'original',
      service: CONFIG_ID,
      step: 'PRE',
      output: 'file',
      folder: join(folders.outbox, 'originals'),
      fileName: '',
      x: 480,
      y: 220,
      wires: [['soak-keep-original']],
    },
    {
      id: 'soak-keep-original',
      type: 'change',
      z: TAB,
      name: 'keep its path',
      rules: [{ t: 'move', p: 'filename', pt: 'msg', to: 'original', tot: 'msg' }],
      action: '',
      property: '',
      from: '',
      to: '',
      reg: false,
      x: 650,
      y: 220,
      wires: [['soak-enhanced']],
    },
    {
      id: 'soak-enhanced',
      type: 'media-enhance-download',
      z: TAB,
      name: 'enhanced',
      service: CONFIG_ID,
      step: 'ENHANCED',
      output: 'file',
      folder: folders.outbox,
      fileName: '',
      x: 820,
      y: 220,
      wires: [['soak-file-away']],
    },
    fn('soak-file-away', 'file away in done/', fileAway, [['soak-outputs']], 140, 300),
    appendLines('soak-outputs', 'records/outputs.jsonl', join(folders.records, OUTPUTS_FILE), 380, 300),
    {
      id: 'soak-catch',
      type: 'catch',
      z: TAB,
      name: 'failed',
      scope: pipeline,
      uncaught: false,
      x: 110,
      y: 380,
      wires: [['soak-failed']],
    },
    fn('soak-failed', 'file away in failed/', failed, [['soak-failures']], 300, 380),
    appendLines('soak-failures', 'records/failures.jsonl', join(folders.records, FAILURES_FILE), 540, 380),
  ];
}
