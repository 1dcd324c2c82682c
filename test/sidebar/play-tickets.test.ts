// The player's tickets on their own, with a clock the test moves: a ticket opens exactly one file of one
// media, lives a few minutes from its issue or last use and never beyond its life, and is opaque.
import assert from 'node:assert/strict';
import { PlayTickets, TICKET_IDLE_MS, TICKET_LIFE_MS, TICKETS_KEPT } from '../../src/sidebar/play-tickets';

const MEDIA = '3f1c9a2e-0000-4000-8000-000000000001';
const OTHER = '3f1c9a2e-0000-4000-8000-000000000002';

describe("sidebar: the player's tickets", () => {
  let now: number;
  let tickets: PlayTickets;
  beforeEach(() => {
    now = Date.parse('2026-11-25T12:00:00Z');
    tickets = new PlayTickets(() => now);
  });

  it('opens the one file of the one media it was issued for, and is a new random string at each issue', () => {
    const ticket = tickets.issue(MEDIA, 'PRE');
    assert.match(ticket, /^[\w-]{32}$/, '24 random bytes, base64url');
    assert.notEqual(tickets.issue(MEDIA, 'PRE'), ticket, 'each issue is a new ticket');
    assert.equal(tickets.admits(ticket, MEDIA, 'PRE'), true);
    assert.equal(tickets.admits(ticket, MEDIA, 'ENHANCED'), false, "not the media's other file");
    assert.equal(tickets.admits(ticket, OTHER, 'PRE'), false, 'not another media');
    assert.equal(tickets.admits('made-up', MEDIA, 'PRE'), false);
    assert.equal(tickets.admits(ticket, MEDIA, 'PRE'), true, 'a refusal for another file does not spend it');
  });

  it('refuses a ticket unused for a few minutes, keeps one in use alive, and none beyond its life', () => {
    const idle = tickets.issue(MEDIA, 'ENHANCED');
    now += TICKET_IDLE_MS + 1;
    assert.equal(tickets.admits(idle, MEDIA, 'ENHANCED'), false, 'expired unused');

    const issuedAt = now;
    const used = tickets.issue(MEDIA, 'ENHANCED');
    // A file being played asks again and again (Range requests): each use keeps its ticket alive ...
    const step = TICKET_IDLE_MS / 2;
    for (now = issuedAt; now < issuedAt + TICKET_LIFE_MS; now += step)
      assert.equal(tickets.admits(used, MEDIA, 'ENHANCED'), true, `in use ${(now - issuedAt) / 1000} s after issue`);
    // ... until its life is over (its last use was only half an idle time ago).
    now = issuedAt + TICKET_LIFE_MS + 1;
    assert.equal(tickets.admits(used, MEDIA, 'ENHANCED'), false, 'past its life');
  });

  it('refuses every ticket once the results are cleared, and keeps a bounded number', () => {
    const ticket = tickets.issue(MEDIA, 'PRE');
    tickets.clear();
    assert.equal(tickets.admits(ticket, MEDIA, 'PRE'), false);
    const first = tickets.issue(MEDIA, 'PRE');
    for (let i = 0; i < TICKETS_KEPT; i++) tickets.issue(OTHER, 'PRE');
    assert.equal(tickets.admits(first, MEDIA, 'PRE'), false, 'the oldest went first');
  });
});
