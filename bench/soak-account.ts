// The tally of a soak run: what became of each dropped input (an output, a failure at the Catch node, or
// nothing), of each media the engine accepted, and why each failure happened.
import type { AcceptedMedia } from './soak-engine';
import type { SoakInput } from './soak-media';
import type { FailureRecord, OutputRecord } from './soak-records';

/** Something the soak did to the system, and (for the engine restart) until when it was away. */
export interface ChaosEvent {
  name: string;
  at: number;
  /** When the system was back (Node-RED's admin API or the engine answering). */
  backAt: number;
}

export interface LostInput {
  input: string;
  droppedAt: number;
  /** Where its file was left: inbox/ (never taken), work/ (taken, never finished), or nowhere. */
  left: string;
  /** The media the engine accepted for it, with their last state. */
  media: string[];
  /**
   * The first deploy or restart of Node-RED after its last sign of life (dropped, or its media last asked
   * about): only those stop a flow's messages. None means it was still in flight at the end.
   */
  during: string;
}

export interface Tally {
  dropped: number;
  withOutput: number;
  failed: number;
  lost: LostInput[];
  /** Inputs with more than one output (sent on twice, through one media or two). */
  duplicated: string[];
  /** Inputs with an output and a failure both. */
  outputAndFailure: string[];
  accepted: number;
  /** Accepted media whose input has neither output nor failure. */
  hung: AcceptedMedia[];
  /** Accepted media no record names whose input has an outcome (its upload's answer was lost, or it was uploaded again). */
  orphaned: Array<{ media: AcceptedMedia; why: string }>;
  failuresByCause: Map<string, FailureRecord[]>;
  engineFailedInjected: number;
  engineFailedOther: AcceptedMedia[];
}

/** Time after the engine is back within which refused or cut connections still belong to its restart (the client's retries). */
const RESTART_GRACE_MS = 15_000;

export function causeOf(failure: FailureRecord, engineRestarts: ChaosEvent[]): string {
  const { code, message } = failure;
  if (code === 'JOB_FAILED' && /\(an injected fault\)/.test(message)) return 'injected: processing ended FAILED';
  if (/injected fault: internal error/.test(message)) return 'injected: 500 (an upload is not sent twice)';
  // While the engine is away every request is refused; its retries can be used up before it is back.
  const aroundRestart = engineRestarts.some((e) => failure.at >= e.at && failure.at <= e.backAt + RESTART_GRACE_MS);
  if (
    aroundRestart &&
    (code === 'NETWORK' || code === 'RATE_LIMITED' || /other side closed|terminated|socket/i.test(message))
  ) {
    return 'engine restart: retries used up while it was away';
  }
  if (/injected fault: service unavailable/.test(message)) return 'injected: 503, retries used up';
  if (code === 'RATE_LIMITED') return '429, retries used up';
  if (/other side closed|terminated|ECONNRESET|socket hang up|broke off/i.test(message))
    return 'injected: connection reset mid-answer';
  return 'unexplained';
}

export function tally(
  inputs: SoakInput[],
  droppedAt: Map<string, number>,
  outputs: OutputRecord[],
  failures: FailureRecord[],
  accepted: AcceptedMedia[],
  events: ChaosEvent[],
  leftIn: { inbox: Set<string>; work: Set<string> },
  lastAskedAbout: Map<string, number> = new Map(),
): Tally {
  const outputsOf = groupBy(outputs, (r) => r.input);
  const failuresOf = groupBy(
    failures.filter((f) => f.input),
    (f) => f.input!,
  );
  const mediaOf = groupBy(accepted, (m) => m.fileName);
  const named = new Set([...outputs.map((r) => r.media_uid), ...failures.map((f) => f.media_uid)].filter(Boolean));
  const dropped = inputs.filter((i) => droppedAt.has(i.name));
  const lost: LostInput[] = [];
  for (const input of dropped) {
    if (outputsOf.has(input.name) || failuresOf.has(input.name)) continue;
    const at = droppedAt.get(input.name)!;
    const media = mediaOf.get(input.name) ?? [];
    const lastSign = Math.max(at, ...media.map((m) => Math.max(m.insertedAt, lastAskedAbout.get(m.uid) ?? 0)));
    const next = events.find((e) => !e.name.startsWith('engine') && e.at >= lastSign);
    lost.push({
      input: input.name,
      droppedAt: at,
      left: leftIn.inbox.has(input.name) ? 'inbox/' : leftIn.work.has(input.name) ? 'work/' : 'nowhere',
      media: media.map((m) => `${m.uid} ${m.status}`),
      during: next?.name ?? 'none after its last sign of life: hung',
    });
  }
  const lostNames = new Set(lost.map((l) => l.input));
  const orphaned: Tally['orphaned'] = [];
  for (const media of accepted) {
    if (lostNames.has(media.fileName) || named.has(media.uid)) continue;
    const uploadFailure = failuresOf.get(media.fileName)?.find((f) => !f.media_uid);
    const why = uploadFailure
      ? `the upload failed at the flow (${uploadFailure.code}: ${uploadFailure.message.slice(0, 120)}) after the engine accepted it`
      : 'another upload of the same input had the outcome';
    orphaned.push({ media, why });
  }
  const engineRestarts = events.filter((e) => e.name.startsWith('engine'));
  const failuresByCause = groupBy(failures, (f) => `${f.code ?? 'no code'} | ${causeOf(f, engineRestarts)}`);
  const failedMedia = accepted.filter((m) => m.status === 'FAILED');
  return {
    dropped: dropped.length,
    withOutput: dropped.filter((i) => outputsOf.has(i.name)).length,
    failed: dropped.filter((i) => failuresOf.has(i.name) && !outputsOf.has(i.name)).length,
    lost,
    duplicated: [...outputsOf].filter(([, records]) => records.length > 1).map(([name]) => name),
    outputAndFailure: [...outputsOf.keys()].filter((name) => failuresOf.has(name)),
    accepted: accepted.length,
    hung: accepted.filter((m) => lostNames.has(m.fileName)),
    orphaned,
    failuresByCause,
    engineFailedInjected: failedMedia.filter((m) => /\(an injected fault\)/.test(m.error?.message ?? '')).length,
    engineFailedOther: failedMedia.filter((m) => !/\(an injected fault\)/.test(m.error?.message ?? '')),
  };
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    groups.set(k, [...(groups.get(k) ?? []), item]);
  }
  return groups;
}
