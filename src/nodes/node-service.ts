// How a media node reaches its config node's shared client; a node without one shows so at once and
// fails each message with the reason.
import type { MediaEnhanceClient } from '../client/client';
import { fieldName, InputError } from './input-error';
import type { MediaEnhanceConfigNode } from './config-node';
import type { NodeDef, RedApi, RedNode } from './red';
import { translator } from './texts';

export interface NodeService {
  client(): Promise<MediaEnhanceClient>;
  /** The config node's default wait timeout. */
  waitTimeoutMs(): number | undefined;
}

export function serviceOf(RED: RedApi, node: RedNode, def: NodeDef): NodeService {
  const config =
    typeof def.service === 'string' ? (RED.nodes.getNode(def.service) as MediaEnhanceConfigNode | null) : null;
  if (!config) {
    const t = translator(RED);
    const setting = { prop: 'service', label: t('media-enhance.setting.service') };
    const reason = t('media-enhance.input.lineWithoutValue', {
      field: fieldName(t, setting),
      rule: t('media-enhance.error.noService'),
    });
    const missing = new InputError([reason], [setting]);
    node.status({ fill: 'red', shape: 'ring', text: t('media-enhance.reason.noService') });
    return { client: () => Promise.reject(missing), waitTimeoutMs: () => undefined };
  }
  return { client: () => config.getClient(), waitTimeoutMs: () => config.waitTimeoutMs };
}
