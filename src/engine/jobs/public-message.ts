// A media's error is read by whoever holds its key (the API, the client's errors, Node-RED's log and
// sidebar): it says what went wrong with the media, never where the engine keeps things.

/** An absolute path (two parts or more) not inside a URL: `/srv/data/media/<uid>/input` -> `input`. */
const ABSOLUTE_PATH = /(?<![\w.:/~-])\/(?:[^\s/'"`:;,()[\]]+\/)+([^\s/'"`:;,()[\]]*)/g;

/** The message without the engine's data folder or any other absolute path: each becomes its last part. */
export function publicMessage(message: string, dataDir: string): string {
  const withoutDataDir = dataDir ? message.split(dataDir).join('') : message;
  return withoutDataDir.replace(ABSOLUTE_PATH, (_path, last: string) => last || '/');
}
