// The part of the editor's global `RED` the sidebar tab uses.

export interface RedForSidebar {
  comms: { subscribe(topic: string, callback: (topic: string, data: unknown) => void): void };
  settings: { get(name: string): unknown; apiRootUrl?: string };
  events: { on(event: string, callback: () => void): void };
  notify(
    text: string,
    options?: {
      type?: string;
      timeout?: number;
      modal?: boolean;
      fixed?: boolean;
      buttons?: { text: string; class?: string; click: () => void }[];
    },
  ): { close(): void } | undefined;
}
