// The part of Node-RED's editor API (the browser's global `RED`) that the editor tests call inside
// page.evaluate(). Node-RED ships no types for it; this says what the tests rely on.

/** Each `each*` caller names the fields of a node (or a workspace) that it reads. */
export interface RedEditor {
  nodes: {
    getType(type: string): { category: string };
    node(id: string): unknown;
    eachNode<N>(visit: (node: N) => void): void;
    eachConfig<N>(visit: (node: N) => void): void;
    eachWorkspace<W>(visit: (workspace: W) => void): void;
    workspace(id: string): unknown;
  };
  editor: {
    edit(node: unknown): void;
    /** Opens a config node's dialog on its own, as the Configuration nodes sidebar does. */
    editConfig(name: string, type: string, id: string): void;
    getEditStack(): Record<string, unknown>[];
    /** Checks a node's settings again, setting its `valid` and `validationErrors`, as a dialog's OK does. */
    validateNode(node: unknown): boolean;
  };
  sidebar: { show(tab: string): void; help: { show(type: string): void } };
  menu: { setSelected(id: string, selected: boolean): void };
  /** `delete` removes a tab with its nodes, as its Delete does (undoable). */
  workspaces: { show(id: string): void; active(): string; delete(workspace: unknown): void };
  actions: { invoke(action: string): void };
  /** Dialogs: each node's edit dialog is a tray; close() closes the one on top, as its Cancel does. */
  tray: { close(): void };
  /** What the workspace is doing with the mouse, one of `state`'s values. */
  view: { state(): number };
  state: { DEFAULT: number; IMPORT_DRAGGING: number };
  /** The editor's settings; `auth-tokens` holds a logged-in user's admin token (adminAuth). */
  settings: { version?: string; set(name: string, value: unknown): void; remove(name: string): void };
}
