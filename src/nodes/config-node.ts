// media-enhance-config: the service a flow talks to, and the one client every node using it shares
// (so they share its rate limiters and status poller). With the built-in local engine it starts the
// engine, which a deploy that leaves the engine's settings as they were keeps running (kept-engines.ts).
import { MediaEnhanceClient } from '../client/client';
import { MediaEnhanceError } from '../client/errors';
import { ENGINE_EXTENSIONS } from '../contract/extensions';
import type { SharingState } from '../client/shared-limiter/redis-store';
import { readServiceConfig, type ServiceConfig } from './config-options';
import { idSegment } from './id-segment';
import { fieldName, InputError } from './input-error';
import { useEngine, stopUnusedEngines } from './kept-engines';
import { engineSettingsKey, startLocalEngine, type LocalEngine } from './local-engine';
import type { NodeDef, RedApi, RedNode } from './red';
import { publishExampleMedia } from './example-media';
import { sweepJournalsAfterEachDeploy } from './journal-sweep';
import { translator, type Translate } from './texts';
import { sidebarRegistry } from '../sidebar/registry';
import type { ServiceStorage } from '../sidebar/service-state';
import { nativeRuntimeWouldHelp } from '../enhance/onnx-runtimes';

export const CONFIG_TYPE = 'media-enhance-config';

export interface MediaEnhanceConfigNode extends RedNode {
  /** The shared client; rejects with the reason when the service cannot be used (bad setting, no key, engine failed). */
  getClient(): Promise<MediaEnhanceClient>;
  /** Default timeout of wait nodes, from the config; undefined waits as long as the media is in progress. */
  waitTimeoutMs?: number;
}

interface OpenService {
  client: MediaEnhanceClient;
  /** The built-in engine's media on disk; a remote service's are not this Node-RED's to see. */
  storage?: ServiceStorage;
  /** `removed`: the config node was deleted or disabled (its engine stops now, not kept for the deploy). */
  close(removed: boolean): Promise<void>;
}

async function openService(RED: RedApi, node: RedNode, config: ServiceConfig, t: Translate): Promise<OpenService> {
  const common = { limits: config.limits, requestTimeoutMs: config.requestTimeoutMs };
  if (config.service === 'remote') {
    const apiKey = node.credentials?.apiKey;
    if (!apiKey) throw new MediaEnhanceError('AUTH', t('media-enhance-config.error.noApiKey'));
    const client = newRemoteClient(t, {
      ...common,
      baseUrl: config.baseUrl!,
      apiKey,
      allowInsecureHttp: config.allowInsecureHttp,
      extensions: config.extensions,
      sharedLimiter: config.sharedLimits && {
        ...config.sharedLimits,
        password: node.credentials?.redisPassword || undefined,
        onStateChange: sharingReporter(node, t),
      },
    });
    return { client, close: () => client.close() };
  }
  const claimed = (segment: string): boolean => {
    let found = false;
    RED.nodes.eachNode((def) => (found ||= def.type === CONFIG_TYPE && idSegment(def.id) === segment));
    return found;
  };
  // Taken before the first await: the deploy's `flows:started` must see the engine in use (kept-engines.ts).
  const use = useEngine(
    node.id,
    engineSettingsKey(RED.settings, node.id, config.limits),
    () =>
      startLocalEngine(
        RED.settings,
        node.id,
        config.limits,
        t,
        (line) => node.log(line),
        claimed,
        (uid) => sidebarRegistry.mediaRemoved(uid),
      ),
    engineStopFailed(RED, t),
  );
  let engine: LocalEngine;
  try {
    engine = await use.engine;
  } catch (err) {
    await use.release(true);
    throw err;
  }
  // The client starts from the engine's own limits and window, so its first requests never meet a 429.
  const client = new MediaEnhanceClient({
    ...common,
    limits: engine.limits,
    windowMs: engine.windowMs,
    baseUrl: engine.url,
    apiKey: engine.apiKey,
    extensions: ENGINE_EXTENSIONS,
  });
  node.log(t('media-enhance-config.log.listening', { url: engine.url }));
  hintNativeRuntime(node, t);
  return {
    client,
    storage: engine.storage,
    close: async (removed) => {
      try {
        await client.close();
      } finally {
        await use.release(removed);
      }
    },
  };
}

let nativeHinted = false;

/**
 * Once per Node-RED process: where onnxruntime-node has a build for the machine but is not installed, says
 * how to add it (LARK and LARK_V2 run about twice as fast with it). The status clears at the next deploy.
 */
function hintNativeRuntime(node: RedNode, t: Translate): void {
  if (nativeHinted || !nativeRuntimeWouldHelp()) return;
  nativeHinted = true;
  node.status({ fill: 'blue', shape: 'ring', text: t('media-enhance-config.status.nativeRuntime') });
  node.log(t('media-enhance-config.log.nativeRuntime'));
}

/**
 * Says when the limits stop being shared (Redis unreachable, slow or answering wrongly: each call then uses this instance's
 * own limiter) and when sharing resumes. The first connection says nothing: sharing is what was asked for.
 */
function sharingReporter(node: RedNode, t: Translate): (state: SharingState, reason?: string) => void {
  let lost = false;
  return (state, reason) => {
    if (state === 'unreachable') {
      lost = true;
      node.status({ fill: 'yellow', shape: 'ring', text: t('media-enhance-config.status.notShared') });
      node.warn(t('media-enhance-config.warn.notShared', { reason: reason ?? 'Redis unreachable' }));
    } else if (lost) {
      lost = false;
      node.status({});
      node.log(t('media-enhance-config.log.sharedAgain'));
    }
  };
}

/** The client's own checks name its options (`baseUrl`, `apiKey`); a flow author knows the config node's settings. */
function newRemoteClient(
  t: Translate,
  options: ConstructorParameters<typeof MediaEnhanceClient>[0],
): MediaEnhanceClient {
  try {
    return new MediaEnhanceClient(options);
  } catch (err) {
    if (!(err instanceof MediaEnhanceError) || err.code !== 'VALIDATION') throw err;
    const settings = {
      baseUrl: { prop: 'baseUrl', label: t('media-enhance-config.setting.baseUrl') },
      apiKey: { prop: 'apiKey', label: t('media-enhance-config.label.apiKey') },
    };
    const settingOf = (line: string) => Object.entries(settings).find(([option]) => line.startsWith(`${option}:`));
    const fields = err.details.map((line) => settingOf(line)?.[1] ?? line.split(':', 1)[0]);
    const lines = err.details.map((line, i) => {
      const setting = settingOf(line);
      return setting ? `${fieldName(t, fields[i])}:${line.slice(setting[0].length + 1)}` : line;
    });
    throw new InputError(lines, fields);
  }
}

/** The service as the editor's sidebar names it: as the config node's label does. */
function sidebarNameOf(t: Translate, def: NodeDef): { name: string; kind: 'built-in' | 'remote' } {
  if (def.mode !== 'remote') return { name: def.name || t('media-enhance-config.label.localEngine'), kind: 'built-in' };
  let host = '';
  try {
    host = new URL(String(def.baseUrl)).host;
  } catch {
    // the config node reports the bad URL itself
  }
  return { name: def.name || host || t('media-enhance-config.paletteLabel'), kind: 'remote' };
}

/** An engine stopped with no node left to tell (kept for a deploy, or swept): the runtime's log says it. */
function engineStopFailed(RED: RedApi, t: Translate): (err: Error) => void {
  return (err) => RED.log.warn(t('media-enhance-config.log.engineStopFailed', { error: err.message }));
}

export default function register(RED: RedApi): void {
  publishExampleMedia();
  sweepJournalsAfterEachDeploy(RED);
  stopUnusedEngines(RED, engineStopFailed(RED, translator(RED)));
  RED.nodes.registerType(
    CONFIG_TYPE,
    function (this: RedNode, def: NodeDef) {
      RED.nodes.createNode(this, def);
      const node = this as MediaEnhanceConfigNode;
      const t = translator(RED);
      let service: Promise<OpenService>;
      try {
        const config = readServiceConfig(t, def);
        node.waitTimeoutMs = config.waitTimeoutMs;
        service = openService(RED, node, config, t);
      } catch (err) {
        service = Promise.reject(err instanceof Error ? err : new Error(String(err)));
      }
      service.catch((err: Error) => node.error(t('media-enhance-config.error.cannotUse', { error: err.message })));
      const shown = sidebarRegistry.addService(node.id, sidebarNameOf(t, def));
      service.then(
        (open) => shown.ready(open.client, open.client.baseUrl, open.storage),
        (err: Error) => shown.failed(err.message),
      );
      node.getClient = () => service.then((open) => open.client);
      node.on('close', (removed, done) => {
        shown.remove();
        service
          .then(
            (open) => open.close(removed === true),
            () => undefined,
          )
          .then(
            () => done(),
            (err: Error) => {
              node.warn(t('media-enhance-config.error.closing', { error: err.message }));
              done();
            },
          );
      });
    },
    { credentials: { apiKey: { type: 'password' }, redisPassword: { type: 'password' } } },
  );
}
