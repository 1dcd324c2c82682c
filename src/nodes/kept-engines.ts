// The built-in engines of the config nodes, kept across deploys. Node-RED closes and recreates every
// node on a full deploy, config nodes included; the engine outlives its config node so that a deploy
// that leaves the engine's settings as they were keeps it running, on the same port, its jobs going on.
// A config node whose engine settings changed gets a new engine (the old one stops; its unfinished
// media resume in the new one, from the data folder); a deleted config node's engine stops at once.
import type { LocalEngine } from './local-engine';
import type { RedApi } from './red';

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
export function useEngine(configId: string, key: string, start: () => Promise<LocalEngine>): EngineUse {
  let entry = kept.get(configId);
  if (entry && entry.key === key && !entry.stopping) {
    clearTimeout(entry.stopTimer);
    entry.stopTimer = undefined;
    entry.users++;
  } else {
    const before = entry ? stop(configId, entry) : Promise.resolve();
    entry = { key, engine: before.then(start), users: 1 };
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
      mine.stopTimer = setTimeout(() => void stop(configId, mine), KEEP_FOR_DEPLOY_MS);
      mine.stopTimer.unref();
    },
  };
}

/** After every start and deploy: an engine that no config node took back has no use left. */
export function stopUnusedEnginesAfterEachDeploy(RED: RedApi): void {
  const previous = listeners.get(RED.events);
  if (previous) RED.events.removeListener('flows:started', previous);
  const sweep = () => {
    for (const [configId, entry] of kept) if (entry.users === 0) void stop(configId, entry);
  };
  listeners.set(RED.events, sweep);
  RED.events.on('flows:started', sweep);
}

const listeners = new WeakMap<object, () => void>();

function stop(configId: string, entry: KeptEngine): Promise<void> {
  clearTimeout(entry.stopTimer);
  entry.stopTimer = undefined;
  if (kept.get(configId) === entry) kept.delete(configId);
  entry.stopping ??= entry.engine.then(
    (engine) => engine.close(),
    () => undefined, // an engine that never started has nothing to stop
  );
  return entry.stopping;
}
