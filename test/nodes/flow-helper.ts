// The nodes as Node-RED runs them, through node-red-node-test-helper: real flows with Catch and helper
// nodes, against a real local engine over loopback.
import { promises as fsp } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventEmitter } from 'node:events';
import type { SinonSpy } from 'sinon';

export interface FlowNode extends EventEmitter {
  id: string;
  receive(msg: Record<string, unknown>): void;
  status: SinonSpy;
  error: SinonSpy;
  warn: SinonSpy;
}

interface TestHelper {
  init(runtimePath: string, settings?: Record<string, unknown>): void;
  settings(settings?: Record<string, unknown>): Record<string, unknown>;
  load(nodes: unknown[], flow: object[], credentials?: Record<string, unknown>): Promise<void>;
  setFlows(flow: object[], type: 'full' | 'flows' | 'nodes', credentials?: Record<string, unknown>): Promise<void>;
  unload(): Promise<void>;
  getNode(id: string): FlowNode;
  startServer(): Promise<void>;
  stopServer(): Promise<void>;
  /** The helper's server, http://127.0.0.1:<port> (its websocket listeners are there too). */
  url(): string;
  log(): SinonSpy;
  _redNodes: { getFlows(): { flows: object[] } };
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- an untyped CommonJS module, typed by TestHelper above
export const helper = require('node-red-node-test-helper') as TestHelper;

/** The seven node modules as Node-RED loads them (nodes/*.js), plus the core Catch and Complete nodes. */
export const NODE_MODULES: unknown[] = ['config', 'file', 'audio', 'video', 'upload', 'wait', 'download'].map(
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by path, the way Node-RED loads them
  (name) => require(join(__dirname, '..', '..', '..', 'nodes', `media-enhance-${name}.js`)) as unknown,
);
for (const core of ['25-catch.js', '24-complete.js']) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded by path, the way Node-RED loads them
  NODE_MODULES.push(require(`@node-red/nodes/core/common/${core}`));
}

let userDir: string | undefined;

/**
 * Loads a flow as the editor would save it: nodes on a tab carry x/y (without them the runtime takes
 * them for config nodes).
 */
export function loadFlow(flow: object[], credentials?: Record<string, unknown>): Promise<void> {
  return helper.load(NODE_MODULES, placed(flow), credentials);
}

export function placed(flow: object[]): object[] {
  return flow.map((n) => ('z' in n ? { x: 100, y: 100, ...n } : n));
}

/** Starts the helper's runtime with a fresh user folder; `engine` is settings.js's `mediaEnhance.engine`. */
export async function initHelper(engine: Record<string, unknown> = {}): Promise<string> {
  userDir = await fsp.mkdtemp(join(tmpdir(), 'me-nodes-'));
  helper.init(require.resolve('node-red'), { userDir, fileWorkingDirectory: userDir, mediaEnhance: { engine } });
  await helper.startServer();
  return userDir;
}

/**
 * Unloads the flows and forgets the messages their nodes kept for the next start (a wait still in flight
 * when a test ends would otherwise be resumed by the next test's node of the same id).
 */
export async function unloadFlow(): Promise<void> {
  await helper.unload();
  if (userDir) await fsp.rm(join(userDir, 'media-enhance'), { recursive: true, force: true });
}

export async function stopHelper(): Promise<void> {
  await helper.unload();
  await helper.stopServer();
  if (userDir) await fsp.rm(userDir, { recursive: true, force: true });
}

/** Resolves with the next message a node receives (a helper node) or emits on `call:<method>`. */
export function nextInput(node: FlowNode, timeoutMs = 20_000): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no message reached ${node.id} in ${timeoutMs} ms`)), timeoutMs);
    node.once('input', (msg: Record<string, unknown>) => {
      clearTimeout(timer);
      resolve(msg);
    });
  });
}

/** Collects every message a node receives. */
export function collect(node: FlowNode): Record<string, unknown>[] {
  const seen: Record<string, unknown>[] = [];
  node.on('input', (msg: Record<string, unknown>) => seen.push(msg));
  return seen;
}

export function localConfig(id = 'svc'): object {
  return { id, type: 'media-enhance-config', name: 'local', mode: 'local' };
}

export function remoteConfig(baseUrl: string, extra: Record<string, unknown> = {}, id = 'svc'): object {
  return { id, type: 'media-enhance-config', name: 'remote', mode: 'remote', baseUrl, ...extra };
}

/** A Catch node for the whole tab, wired to a helper node `caught`. */
export function catchAll(): object[] {
  return [
    { id: 'catch', type: 'catch', z: 'tab', scope: null, uncaught: false, wires: [['caught']] },
    { id: 'caught', type: 'helper', z: 'tab' },
  ];
}

export const TAB = { id: 'tab', type: 'tab', label: 'test' };

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The status texts one node showed, in order (the helper spies on every node's status at once). */
export function statusTexts(node: FlowNode): (string | undefined)[] {
  return node.status
    .getCalls()
    .filter((call) => call.thisValue === node)
    .map((call) => (call.args[0] as { text?: string }).text);
}
