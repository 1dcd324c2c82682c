/// <reference lib="dom" />
// The live page's main thread: the buttons and figures, the microphone, the AudioContext and its worklet
// (whose source the page carries), and the websocket to the flow. The audio work is all in the worklet
// (live-voice.ts); here each message is only passed on: a chunk from the worklet to the websocket, an
// answer from the websocket to the worklet, the worklet's figures to the screen. For tests and diagnosis
// the page offers `mediaEnhanceLive.record(seconds)`: what went to the speakers, and what the microphone
// gave, over the same frames, and where what played broke.
import type { FromVoice, Hearing, Recorded, ToVoice, VoiceStats } from './live-voice';
import { AUDIO_PATH, IDS, PAGE_GLOBAL, PROCESSOR_NAME } from './page-names';
import { decodeRefusal } from './wire-format';

interface Session {
  context: AudioContext;
  stream: MediaStream;
  node: AudioWorkletNode;
  socket: WebSocket;
  /** The delay the browser reports for the microphone, before the audio reaches the page (s). */
  inputLatency: number;
}

const element = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const startButton = element<HTMLButtonElement>(IDS.start);
const hearButton = element<HTMLButtonElement>(IDS.hear);
const delayText = element(IDS.delay);
const partsText = element(IDS.parts);
const hearingText = element(IDS.hearing);
const statusText = element(IDS.status);
const problemText = element(IDS.problem);

let session: Session | undefined;
let hearing: Hearing = 'cleaned';
const history: Array<VoiceStats & { totalMs: number | null }> = [];
let recorded: { resolve(recording: Recorded): void; reject(err: Error): void } | undefined;

function say(text: string): void {
  statusText.textContent = text;
}

function problem(text: string | undefined): void {
  problemText.hidden = text === undefined;
  problemText.textContent = text ?? '';
}

/** The page's websocket: `audio` under the page's path, ws: or wss: as the page came. */
function audioUrl(location: Location): string {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${location.host}${location.pathname.replace(/\/+$/, '')}/${AUDIO_PATH}`;
}

/** Why this browser cannot give this page the microphone, or undefined when it can. */
function whyNoMicrophone(): string | undefined {
  if (!window.isSecureContext)
    return (
      `This page came over plain http from ${location.host}: browsers give the microphone only to a secure ` +
      'page, one over https or from this same machine (localhost, 127.0.0.1). Open it over https (the ' +
      'package\'s docs say how to give Node-RED https: "A microphone in the browser"), or on the machine ' +
      `Node-RED runs on as http://localhost:${location.port || '80'}${location.pathname}.`
    );
  if (!navigator.mediaDevices?.getUserMedia)
    return 'This browser gives no page a microphone (it has no navigator.mediaDevices.getUserMedia).';
  if (typeof AudioWorkletNode === 'undefined')
    return 'This browser has no AudioWorklet, which the page needs: use a current Chrome, Edge, Firefox or Safari.';
  return undefined;
}

/** The raw microphone: the browser's own noise suppression would hide what enhance stream does. */
async function openMicrophone(): Promise<MediaStream> {
  try {
    return await navigator.mediaDevices.getUserMedia({
      audio: { echoCancellation: false, noiseSuppression: false, autoGainControl: false, channelCount: 1 },
    });
  } catch (err) {
    const name = (err as DOMException).name;
    throw new Error(
      name === 'NotAllowedError'
        ? 'The microphone was not allowed: allow it for this page (the icon in the address bar) and start again.'
        : name === 'NotFoundError'
          ? 'This device has no microphone the browser can use.'
          : `The browser could not open the microphone: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

async function openSocket(url: string): Promise<WebSocket> {
  const socket = new WebSocket(url);
  socket.binaryType = 'arraybuffer';
  const opened = await new Promise<boolean>((resolve) => {
    socket.onopen = () => resolve(true);
    socket.onerror = () => resolve(false);
  });
  if (!opened)
    throw new Error(
      `Node-RED did not take the websocket at ${url}: is the example flow "Hear your microphone cleaned" deployed?`,
    );
  return socket;
}

async function start(): Promise<void> {
  const stream = await openMicrophone();
  // The device's own rate (44.1 or 48 kHz): the worklet converts to and from 16 kHz itself.
  const context = new AudioContext({ latencyHint: 'interactive' });
  let socket: WebSocket | undefined;
  try {
    const source = element(IDS.worklet).textContent ?? '';
    const moduleUrl = URL.createObjectURL(new Blob([source], { type: 'text/javascript' }));
    await context.audioWorklet.addModule(moduleUrl);
    URL.revokeObjectURL(moduleUrl);
    const node = new AudioWorkletNode(context, PROCESSOR_NAME, {
      numberOfInputs: 1,
      numberOfOutputs: 1,
      outputChannelCount: [1],
      channelCount: 1,
      channelCountMode: 'explicit',
      channelInterpretation: 'speakers',
    });
    socket = await openSocket(audioUrl(location));
    const track = stream.getAudioTracks()[0];
    const inputLatency = (track.getSettings() as MediaTrackSettings & { latency?: number }).latency ?? 0;
    session = { context, stream, node, socket, inputLatency };
    node.port.onmessage = (event: MessageEvent<FromVoice>) => fromVoice(event.data);
    socket.onmessage = (event: MessageEvent<ArrayBuffer | string>) => fromFlow(event.data);
    socket.onclose = (event) => {
      if (session?.socket !== socket) return;
      stop();
      problem(
        `The connection to Node-RED closed (${event.code}${event.reason ? `: ${event.reason}` : ''}): ` +
          'start again once the flow is deployed.',
      );
    };
    tell({ type: 'hear', what: hearing });
    context.createMediaStreamSource(stream).connect(node);
    node.connect(context.destination);
    await context.resume();
    tell({ type: 'start' });
  } catch (err) {
    // Nothing of a start that failed stays: the next click starts afresh.
    if (session?.context === context) session = undefined;
    socket?.close();
    for (const track of stream.getTracks()) track.stop();
    void context.close();
    throw err;
  }
}

function startOrStop(): void {
  if (session) return stop();
  startButton.disabled = true;
  problem(undefined);
  say('Asking for the microphone...');
  start().then(
    () => {
      startButton.textContent = 'Stop';
      startButton.disabled = false;
      hearButton.disabled = false;
      say('Listening: speak, and you hear yourself cleaned, a moment later.');
    },
    (err: Error) => {
      problem(err.message);
      say('');
      startButton.disabled = false;
    },
  );
}

/** Ends the session; the flow ends this tab's stream when its websocket closes. */
function stop(): void {
  const ending = session;
  session = undefined;
  if (!ending) return;
  // A recording under way ends with the session: its audio will not come.
  recorded?.reject(new Error('the microphone was stopped during the recording'));
  recorded = undefined;
  ending.socket.close();
  for (const track of ending.stream.getTracks()) track.stop();
  void ending.context.close();
  startButton.textContent = 'Start the microphone';
  hearButton.disabled = true;
  say('Stopped.');
}

function tell(message: ToVoice, transfer: Transferable[] = []): void {
  session?.node.port.postMessage(message, transfer);
}

function fromVoice(message: FromVoice): void {
  if (message.type === 'chunk') {
    if (session?.socket.readyState === WebSocket.OPEN) session.socket.send(message.bytes);
  } else if (message.type === 'stats') show(message);
  else if (message.type === 'recorded') {
    recorded?.resolve(message);
    recorded = undefined;
  }
}

function fromFlow(data: ArrayBuffer | string): void {
  if (typeof data !== 'string') return tell({ type: 'answer', bytes: data }, [data]);
  const refusal = decodeRefusal(data);
  if (!refusal) return;
  if (refusal.seq !== undefined) tell({ type: 'refused', seq: refusal.seq });
  problem(`Node-RED refused a chunk (it plays as silence): ${refusal.error}`);
}

/** The delay the browser reports for its audio devices, in and out (ms); the output's may change as it plays. */
function devicesMs(): number {
  if (!session) return 0;
  const { context, inputLatency } = session;
  return 1000 * ((context.baseLatency ?? 0) + (context.outputLatency ?? 0) + inputLatency);
}

function show(stats: VoiceStats): void {
  const devices = devicesMs();
  const totalMs = stats.delayMs === null ? null : stats.delayMs + devices;
  history.push({ ...stats, totalMs });
  if (history.length > 2400) history.splice(0, history.length - 2400);
  const round = (ms: number) => `${Math.round(ms)} ms`;
  if (totalMs !== null && stats.parts) {
    delayText.textContent = round(totalMs);
    const { chunk, roundTrip, queue, enhance } = stats.parts;
    partsText.textContent =
      `a whole chunk ${round(chunk)}, to Node-RED and back ${round(roundTrip)}, queued to play ${round(queue)}, ` +
      `enhance stream's latency ${round(enhance)}, audio devices ${round(devices)} (as the browser reports them)`;
  }
  hearingText.textContent = stats.hearing === 'cleaned' ? 'the cleaned voice' : 'the original, not cleaned';
  say(
    `Listening. Chunks sent ${stats.sent}, answered ${stats.answered}, refused ${stats.refused}; ` +
      `gaps in the sound ${stats.underruns}; the queue keeps ${round(stats.marginMs)} in hand and let ` +
      `${round(stats.letGoMs)} go that came in bursts.`,
  );
}

function toggleHearing(): void {
  hearing = hearing === 'cleaned' ? 'original' : 'cleaned';
  tell({ type: 'hear', what: hearing });
  hearButton.textContent = hearing === 'cleaned' ? 'Hear the original' : 'Hear the cleaned voice';
}

/** What goes to the speakers and what the microphone gives, over the next `seconds`. */
function record(seconds: number): Promise<Recorded> {
  if (!session) return Promise.reject(new Error('the microphone is not started'));
  if (recorded) return Promise.reject(new Error('a recording is under way'));
  const frames = Math.round(seconds * session.context.sampleRate);
  return new Promise((resolve, reject) => {
    recorded = { resolve, reject };
    tell({ type: 'record', frames });
  });
}

const why = whyNoMicrophone();
if (why) {
  problem(why);
  startButton.disabled = true;
} else {
  startButton.addEventListener('click', startOrStop);
  hearButton.addEventListener('click', toggleHearing);
}
(window as unknown as Record<string, unknown>)[PAGE_GLOBAL] = { record, history };
