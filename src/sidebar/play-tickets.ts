// The player's tickets. A media element sends no header, so the editor's player cannot send the user's
// admin token as the editor's other requests do, and a token in its address would go wherever the
// address goes (a proxy's access log, the browser's history). Instead the editor asks, with its token and
// the read permission, for a ticket for one file of one media, and the player's address carries that: an
// opaque random string, good for that one file only, for a few minutes since it was issued or last used
// (so a file being played goes on loading) and never longer than an hour. It is neither the token nor
// the service's key, and is kept in this process only.
import { randomBytes } from 'node:crypto';
import type { Step } from '../contract/fields';

/** A ticket no request used for this long is refused. */
export const TICKET_IDLE_MS = 5 * 60_000;
/** A ticket is refused this long after it was issued, however often it was used. */
export const TICKET_LIFE_MS = 60 * 60_000;
/** The most tickets kept at once: the oldest go first (an editor asks for two per result it opens). */
export const TICKETS_KEPT = 1000;

interface Ticket {
  uid: string;
  step: Step;
  issuedAt: number;
  usedAt: number;
}

export class PlayTickets {
  private readonly tickets = new Map<string, Ticket>();

  constructor(
    private readonly now: () => number = Date.now,
    private readonly idleMs = TICKET_IDLE_MS,
    private readonly lifeMs = TICKET_LIFE_MS,
  ) {}

  /** A new ticket for the `step` file of media `uid`. */
  issue(uid: string, step: Step): string {
    this.dropExpired();
    while (this.tickets.size >= TICKETS_KEPT) this.tickets.delete(this.tickets.keys().next().value!);
    const ticket = randomBytes(24).toString('base64url');
    const at = this.now();
    this.tickets.set(ticket, { uid, step, issuedAt: at, usedAt: at });
    return ticket;
  }

  /** Whether `ticket` is a live ticket for exactly this file; a use keeps it alive (within its life). */
  admits(ticket: string, uid: string, step: Step): boolean {
    const found = this.tickets.get(ticket);
    if (!found) return false;
    if (this.expired(found)) {
      this.tickets.delete(ticket);
      return false;
    }
    if (found.uid !== uid || found.step !== step) return false;
    found.usedAt = this.now();
    return true;
  }

  /** Refuses every ticket issued so far (the results were cleared). */
  clear(): void {
    this.tickets.clear();
  }

  private expired(ticket: Ticket): boolean {
    const at = this.now();
    return at - ticket.usedAt > this.idleMs || at - ticket.issuedAt > this.lifeMs;
  }

  private dropExpired(): void {
    for (const [key, ticket] of this.tickets) if (this.expired(ticket)) this.tickets.delete(key);
  }
}
