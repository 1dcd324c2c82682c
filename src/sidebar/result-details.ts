// A result's detail view: the media's metadata and loudness report, fetched through the client of the
// service that handled it (so through its rate limits) the first time someone opens it, then kept.
import type { MediaMetadata } from '../client/types';
import type { LoudnessReport } from '../contract/loudness-report';
import type { SidebarRegistry } from './registry';
import type { ResultRow } from './state';

export interface ResultDetails {
  result: ResultRow;
  metadata: MediaMetadata | null;
  loudness: LoudnessReport | null;
  /** Whether the service offers a loudness report for this media (false: show the numbers without a chart). */
  loudnessOffered: boolean;
}

const KEPT_DETAILS = 50;

export class ResultDetailCache {
  private readonly kept = new Map<string, Promise<Omit<ResultDetails, 'result'>>>();

  constructor(private readonly registry: SidebarRegistry) {}

  /** Forgets every kept detail (the results were cleared). */
  clear(): void {
    this.kept.clear();
  }

  /** undefined for a result this instance does not hold (any more). */
  async details(id: string): Promise<ResultDetails | undefined> {
    const result = this.registry.result(id);
    if (!result) return undefined;
    let fetched = this.kept.get(id);
    if (!fetched) {
      fetched = this.fetch(result);
      this.kept.set(id, fetched);
      if (this.kept.size > KEPT_DETAILS) this.kept.delete(this.kept.keys().next().value!);
      // A failed fetch (service away, rate limit) is tried again at the next opening.
      fetched.catch(() => this.kept.delete(id));
    }
    return { result, ...(await fetched) };
  }

  private async fetch(result: ResultRow): Promise<Omit<ResultDetails, 'result'>> {
    const client = this.registry.clientOf(result.serviceId);
    if (!client || result.uid === null) return { metadata: null, loudness: null, loudnessOffered: false };
    const uid = result.uid;
    // Each part on its own: a media the service no longer holds (retention) still shows what its row knows.
    const [metadata, loudness] = await Promise.allSettled([
      client.getMetadata(uid),
      // A failed media has no report to ask for; null from the client: the service offers none for this media.
      result.outcome === 'done' ? client.getLoudnessReport(uid) : Promise.resolve(null),
    ]);
    if (metadata.status === 'rejected' && loudness.status === 'rejected') throw metadata.reason;
    // What could not be fetched is asked for again at the next opening.
    if (metadata.status === 'rejected' || loudness.status === 'rejected') this.kept.delete(result.id);
    const report = loudness.status === 'fulfilled' ? loudness.value : null;
    return {
      metadata: metadata.status === 'fulfilled' ? metadata.value : null,
      loudness: report,
      loudnessOffered: report !== null,
    };
  }
}
