// Waiting metadata: a local-engine extension beyond the interface (docs/interface.md#waiting-metadata).
// `GET /v2/medias/{uid}/metadata?wait=<s>` answers as soon as the media's state changes, or after `<s>`
// seconds with the state unchanged; it counts once against the `getMetadata` limit, like any status request.
import type { FieldIssue } from './field-issue';

/** The query parameter: whole seconds to hold the answer while the media's state stays as it is. */
export const METADATA_WAIT_PARAM = 'wait';

/**
 * Every metadata answer of a service that offers the extension carries this header: the longest wait it
 * holds, in seconds. A client sends `wait` only to a service whose answers said so.
 */
export const METADATA_WAIT_HEADER = 'x-metadata-wait';

/** The issues of a `wait` query value (none when it is a whole number of seconds from 1 to `maxS`). */
export function checkMetadataWait(values: string[], maxS: number): FieldIssue[] {
  const loc = ['query', METADATA_WAIT_PARAM];
  if (values.length > 1) return [{ loc, msg: 'a single value is required', type: 'value_error', input: values }];
  const text = values[0];
  const seconds = Number(text);
  if (!/^\d+$/.test(text) || !(seconds >= 1 && seconds <= maxS))
    return [{ loc, msg: `must be a whole number of seconds from 1 to ${maxS}`, type: 'value_error', input: text }];
  return [];
}

/** The longest wait a service declared in an answer's header; undefined when it declared none. */
export function declaredMetadataWait(header: string | undefined): number | undefined {
  const seconds = Number(header);
  return header !== undefined && Number.isInteger(seconds) && seconds >= 1 ? seconds : undefined;
}
