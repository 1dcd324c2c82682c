// Where a media's uid is born: the route asks the records for one (MediaRecords.newUid) before anything
// is stored, and the files, the record and every later request name the media by it.
import { randomUUID } from 'node:crypto';

/** What `randomUUID` makes: the only names the engine gives media folders and incoming uploads. */
export const ENGINE_UID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** A new media's uid, which the engine makes (so a client's file name never chooses a path). */
export function mintUid(): string {
  return randomUUID();
}
