// The small part of Node-RED's runtime API these nodes use, typed here rather than pulling in the
// community typings (written for Node-RED 1.x). Node-RED calls each node module with `RED`.

export interface NodeMessage {
  _msgid?: string;
  payload?: unknown;
  [property: string]: unknown;
}

export interface NodeStatus {
  fill?: 'red' | 'green' | 'yellow' | 'blue' | 'grey';
  shape?: 'ring' | 'dot';
  text?: string;
}

/** A message, or one per output (null: none there; an array: several on that output, in order). */
export type SendFunction = (msg: NodeMessage | null | (NodeMessage | NodeMessage[] | null)[]) => void;
export type DoneFunction = (err?: Error) => void;

/** A runtime node instance; `this` inside a node constructor once `createNode` has run. */
export interface RedNode {
  id: string;
  type: string;
  name?: string;
  credentials?: Record<string, string | undefined>;
  on(event: 'input', listener: (msg: NodeMessage, send: SendFunction, done: DoneFunction) => void): void;
  on(event: 'close', listener: (removed: boolean, done: () => void) => void): void;
  status(status: NodeStatus | Record<string, never>): void;
  send: SendFunction;
  error(err: unknown, msg?: NodeMessage): void;
  warn(message: unknown): void;
  log(message: unknown): void;
  debug(message: unknown): void;
}

/** What the editor saves for a node: its own properties plus id, type, name, z. */
export interface NodeDef {
  id: string;
  type: string;
  name?: string;
  [property: string]: unknown;
}

export interface RedApi {
  nodes: {
    createNode(node: object, def: NodeDef): void;
    registerType(
      type: string,
      constructor: (this: RedNode, def: NodeDef) => void,
      options?: { credentials?: Record<string, { type: 'text' | 'password' }> },
    ): void;
    getNode(id: string): RedNode | null;
    /** Every node of the deployed flows, disabled flows included, as the editor saved it. */
    eachNode(callback: (def: NodeDef) => void): void;
  };
  /** The runtime's events; `flows:started` follows every start and deploy, `runtime-event` tells the runtime's state. */
  events: {
    on(event: 'flows:started', listener: () => void): void;
    on(event: 'runtime-event', listener: (event: RuntimeEvent) => void): void;
    removeListener(event: 'flows:started', listener: () => void): void;
    removeListener(event: 'runtime-event', listener: (event: RuntimeEvent) => void): void;
  };
  log: {
    warn(message: string): void;
  };
  settings: RuntimeSettings;
  /** Node-RED's i18n: the message `namespace:key` in the runtime's language, placeholders filled (see texts.ts). */
  _(key: string, values?: Record<string, unknown>): string;
}

/** Node-RED's `runtime-event`; `runtime-state` `stop` follows the flows' stop, `deploy` when a deploy restarts them. */
export interface RuntimeEvent {
  id?: string;
  payload?: { state?: string; deploy?: boolean };
}

/** Node-RED's own settings (settings.js), as `RED.settings`. */
export interface RuntimeSettings {
  userDir?: string;
  fileWorkingDirectory?: string;
  [name: string]: unknown;
}
