// How a media node reaches its config node's shared client, and reports settings that cannot work
// as soon as the flow is deployed rather than at the first message.
import type { MediaEnhanceClient } from '../client/client';
import { MediaEnhanceError } from '../client/errors';
import type { MediaEnhanceConfigNode } from './config-node';
import type { NodeDef, RedApi, RedNode } from './red';

export interface NodeService {
  client(): Promise<MediaEnhanceClient>;
  /** The config node's default wait timeout. */
  waitTimeoutMs(): number | undefined;
}

export function serviceOf(RED: RedApi, node: RedNode, def: NodeDef): NodeService {
  const config =
    typeof def.service === 'string' ? (RED.nodes.getNode(def.service) as MediaEnhanceConfigNode | null) : null;
  if (!config) {
    const reason = 'setting "service": no media enhance service is selected; choose or add one in the node\'s settings';
    const missing = new MediaEnhanceError('VALIDATION', reason, { details: [reason] });
    node.status({ fill: 'red', shape: 'ring', text: 'no service' });
    return { client: () => Promise.reject(missing), waitTimeoutMs: () => undefined };
  }
  return { client: () => config.getClient(), waitTimeoutMs: () => config.waitTimeoutMs };
}

/** Runs a check of the node's own settings at deploy; a failure is logged and shown, and each message will fail with it too. */
export function checkSettingsAtDeploy(node: RedNode, check: () => void): void {
  try {
    check();
  } catch (err) {
    node.error((err as Error).message);
    node.status({ fill: 'red', shape: 'ring', text: 'invalid settings' });
  }
}
