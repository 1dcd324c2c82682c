// What every media node does when it is deployed: it finds its config node's service, checks its own
// settings at once (a bad one is logged and shown, and fails each message again), keeps its messages
// across restarts if it offers that, and runs each message as a job (message-jobs.ts). A node's file
// declares its type and what it does with a message.
import { handleMessages, type JobHandler } from './message-jobs';
import { MessageKeeper } from './message-keeper';
import { serviceOf, type NodeService } from './node-service';
import type { NodeDef, NodeMessage, RedApi, RedNode } from './red';
import type { JobStatus } from './status-board';
import { translator, type Translate } from './texts';

export interface MediaNode {
  RED: RedApi;
  node: RedNode;
  def: NodeDef;
  service: NodeService;
  /** Keeps nothing unless the node offers it (`keepsMessages`) and its setting is on. */
  keeper: MessageKeeper;
  t: Translate;
}

export interface MediaNodeJobs {
  /** Checks the node's own settings, run at deploy; a handler that needs them checked per message calls it too. */
  checkSettings?: () => void;
  handle: JobHandler;
  /** The status a message shows first; "starting" unless given. */
  firstStatus?: JobStatus;
}

export function mediaNode(
  type: string,
  options: {
    /** The node has the setting "keep ... across restarts". */
    keepsMessages: boolean;
    /** A message it delivers carries a finished media (the sidebar lists it as a result), not one only started. */
    finishesMedia: boolean;
    /** It uploads the message's file: a Buffer in msg.payload can be kept only once uploaded. */
    uploads?: boolean;
  },
  setUp: (node: MediaNode) => MediaNodeJobs,
): (RED: RedApi) => void {
  return (RED) =>
    RED.nodes.registerType(type, function (this: RedNode, def: NodeDef) {
      RED.nodes.createNode(this, def);
      const t = translator(RED);
      const service = serviceOf(RED, this, def);
      const keeper = new MessageKeeper(RED, this, def, options.keepsMessages);
      const { checkSettings, handle, firstStatus } = setUp({ RED, node: this, def, service, keeper, t });
      if (checkSettings) checkSettingsAtDeploy(this, t, checkSettings);
      const listing = {
        nodeName: def.name || t(`${type}.paletteLabel`),
        serviceId: typeof def.service === 'string' && def.service !== '' ? def.service : null,
        finishesMedia: options.finishesMedia,
      };
      const keepForNextStart = (msg: NodeMessage) => keeper.keepForNextStart(msg, options.uploads === true);
      keeper.resumeInto(handleMessages(this, t, handle, listing, firstStatus, keepForNextStart));
    });
}

/** A setting that cannot work is reported as soon as the flow is deployed rather than at the first message. */
function checkSettingsAtDeploy(node: RedNode, t: Translate, check: () => void): void {
  try {
    check();
  } catch (err) {
    node.error((err as Error).message);
    node.status({ fill: 'red', shape: 'ring', text: t('media-enhance.reason.invalidSettings') });
  }
}
