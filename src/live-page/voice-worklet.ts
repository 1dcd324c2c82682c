// The live page's AudioWorklet module: the processor that the page's AudioWorkletNode runs, the
// microphone in and the speakers out, handing each render quantum and each message to LiveVoice. It
// reads the worklet's own globals (AudioWorkletProcessor, registerProcessor, sampleRate, currentFrame),
// so it is loaded only by the page's audioWorklet.addModule, bundled on its own.
import { LiveVoice, type ToVoice } from './live-voice';
import { PROCESSOR_NAME } from './page-names';

interface WorkletScope {
  AudioWorkletProcessor: new () => { readonly port: MessagePort };
  registerProcessor(name: string, processor: new () => unknown): void;
  sampleRate: number;
  currentFrame: number;
}

const scope = globalThis as unknown as WorkletScope;

class VoiceProcessor extends scope.AudioWorkletProcessor {
  private readonly voice = new LiveVoice(scope.sampleRate, (message, transfer = []) =>
    this.port.postMessage(message, transfer),
  );

  constructor() {
    super();
    this.port.onmessage = (event: MessageEvent<ToVoice>) => this.voice.receive(event.data, scope.currentFrame);
  }

  process(inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    this.voice.process(inputs[0]?.[0], outputs[0][0], scope.currentFrame);
    return true;
  }
}

scope.registerProcessor(PROCESSOR_NAME, VoiceProcessor);
