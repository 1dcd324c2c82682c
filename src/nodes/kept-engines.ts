// The built-in engines of the config nodes, kept across deploys. Node-RED closes and recreates every
// node on a full deploy, config nodes included; the engine outlives its config node so that a deploy
// that leaves the engine's settings as they were keeps it running, on the same port, its jobs going on.
// A config node whose engine settings changed gets a new engine (the old one stops; its unfinished
// media resume in the new one, from the data folder); a deleted config node's engine stops at once, and
// so does every unused engine when the flows stop for good (Node-RED shutting down, or "stop flows").
import type { LocalEngine } from './local-engine';
import type { RedApi, RuntimeEvent } from './red';

/**
 * How long an engine no config node uses is kept, for the deploy under way to take it back. A deploy
 * starts the new nodes right after closing the old ones, and `flows:started` ends the wait earlier.
 */
export const KEEP_FOR_DEPLOY_MS = 5_000;

interface KeptEngine {
  /** The engine settings it runs with (engineSettingsKey). */
  key: string;
  engine: Promise<LocalEngine>;
  users: number;
  stopTimer?: NodeJS.Timeout;
  stopping?: Promise<void>;
}

/** By config node id: each config node has an engine (and a data folder) of its own. */
const kept = new Map<string, KeptEngine>();

export interface EngineUse {
  engine: Promise<LocalEngine>;
  /** The config node is closing: `removed` (deleted, or disabled) stops the engine now, else it waits for the deploy. */
  release(removed: boolean): Promise<void>;
}

/**
 * The engine of config node `configId` with settings `key`: the running one when its settings are the
 * same, else a new one from `start` (after the old one has stopped, as they share a data folder).
 * Call synchronously in the config node's constructor, before `flows:started`.
 */
export function useEngine(
  configId: string,
  key: string,
  start: () => Promise<LocalEngine>,
  onStopFailed: (err: Error) => void,
): EngineUse {
  let entry = kept.get(configId);
  if (entry && entry.key === key && !entry.stopping) {
    clearTimeout(entry.stopTimer);
    entry.stopTimer = undefined;
    entry.users++;
  } else {
    const before = entry ? stop(configId, entry) : Promise.resolve();
    // The new engine starts even when the old one failed to close (its failure is the old one's to report).
    entry = { key, engine: before.then(start, start), users: 1 };
    kept.set(configId, entry);
  }
  const mine = entry;
  let released = false;
  return {
    engine: mine.engine,
    release: async (removed) => {
      if (released) return;
      released = true;
      mine.users--;
      if (mine.users > 0 || kept.get(configId) !== mine) return;
      if (removed) return stop(configId, mine);
      mine.stopTimer = setTimeout(() => {
        stop(configId, mine).catch(onStopFailed);
      }, KEEP_FOR_DEPLOY_MS);
      mine.stopTimer.unref();
    },
  };
}

/**
 * Stops the engines no config node took back: after every start and deploy (`flows:started`), and at
 * once when the flows stop without a deploy to follow (Node-RED shutting down, or the editor's "stop
 * flows"), as the deploy's wait would outlive the process: its timer does not keep Node-RED running.
 */
export function stopUnusedEngines(RED: RedApi, onStopFailed: (err: Error) => void): void {
  const previous = listeners.get(RED.events);
  if (previous) {
    RED.events.removeListener('flows:started', previous.started);
    RED.events.removeListener('runtime-event', previous.runtimeEvent);
  }
  const sweep = () => {
    for (const [configId, entry] of kept) if (entry.users === 0) stop(configId, entry).catch(onStopFailed);
  };
  const runtimeEvent = (event: RuntimeEvent) => {
    if (event.id === 'runtime-state' && event.payload?.state === 'stop' && !event.payload.deploy) sweep();
  };
  listeners.set(RED.events, { started: sweep, runtimeEvent });
  RED.events.on('flows:started', sweep);
  RED.events.on('runtime-event', runtimeEvent);
}

const listeners = new WeakMap<object, { started: () => void; runtimeEvent: (event: RuntimeEvent) => void }>();

/** Resolves when every engine being stopped has closed (whoever must know nothing listens any more). */
export async function enginesStopped(): Promise<void> {
  await Promise.allSettled([...stopping]);
}

const stopping = new Set<Promise<void>>();

function stop(configId: string, entry: KeptEngine): Promise<void> {
  clearTimeout(entry.stopTimer);
  entry.stopTimer = undefined;
  if (kept.get(configId) === entry) kept.delete(configId);
  if (!entry.stopping) {
    const closing = entry.engine.then(
      (engine) => engine.close(),
      () => undefined, // an engine that never started has nothing to stop
    );
    entry.stopping = closing;
    stopping.add(closing);
    const forget = () => stopping.delete(closing);
    closing.then(forget, forget);
  }
  return entry.stopping;
}
