// The last finished media, newest first: a fixed number, the oldest dropped as new ones come.
import type { ResultRow } from './state';

export const RESULTS_KEPT = 50;

export class ResultRing {
  private rows: ResultRow[] = [];

  constructor(private readonly size = RESULTS_KEPT) {}

  /** Adds a result at the top; an earlier result of the same media goes (one row per media). */
  add(row: ResultRow): void {
    const rows = row.uid === null ? this.rows : this.rows.filter((old) => old.uid !== row.uid);
    this.rows = [row, ...rows].slice(0, this.size);
  }

  get(id: string): ResultRow | undefined {
    return this.rows.find((row) => row.id === id);
  }

  hasMedia(uid: string): boolean {
    return this.rows.some((row) => row.uid === uid);
  }

  list(): ResultRow[] {
    return [...this.rows];
  }

  clear(): void {
    this.rows = [];
  }
}
