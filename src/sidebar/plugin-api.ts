// The part of Node-RED's runtime API the sidebar plugin uses, typed here (as src/nodes/red.ts does for
// the nodes). Node-RED 4 and 5 both give a plugin's runtime file these.
import type { IncomingMessage, ServerResponse } from 'node:http';

/** An express request as the admin routes read it. */
export interface AdminRequest extends IncomingMessage {
  params: Record<string, string>;
  query: Record<string, unknown>;
  /** A JSON body, as Node-RED's admin app parses it. */
  body?: unknown;
}

/** An express response as the admin routes answer. */
export interface AdminResponse extends ServerResponse {
  status(code: number): AdminResponse;
  json(body: unknown): AdminResponse;
  end(): this;
  /** Sends a file, answering Range and conditional requests (express's `res.sendFile`). */
  sendFile(
    path: string,
    options: { cacheControl?: boolean; lastModified?: boolean },
    done: (err?: Error) => void,
  ): void;
}

export type AdminHandler = (req: AdminRequest, res: AdminResponse, next: (err?: unknown) => void) => void;

export interface AdminApp {
  get(path: string, ...handlers: AdminHandler[]): void;
  post(path: string, ...handlers: AdminHandler[]): void;
}

export interface PluginRed {
  plugins: { registerPlugin(id: string, definition: Record<string, unknown>): void };
  httpAdmin: AdminApp;
  /** Checks the admin token's scope for `permission` when adminAuth is set; lets every request through otherwise. */
  auth: { needsPermission(permission: string): AdminHandler };
  comms: { publish(topic: string, data: unknown, retain: boolean): void };
  log: { warn(message: string): void };
}
