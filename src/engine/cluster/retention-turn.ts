// One instance at a time runs the retention of media the instances share: the one holding a Redis key
// (SET NX PX) that it renews at each of its sweeps. When it dies, the key lapses and another takes over;
// when it stops normally, it gives the turn back at once, so a rolling restart leaves no gap.
import { randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { KEY_PREFIX } from './redis-connection';

const TURN = `${KEY_PREFIX}:retention-turn`;

/** KEYS[1] the turn; ARGV holder, ttlMs. 1 when `holder` has the turn now (taken, or renewed). */
const TAKE_SCRIPT = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
`;

/** KEYS[1] the turn; ARGV holder. Deletes the turn only while `holder` has it (another may have it by now). */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

interface TurnCommands {
  meTakeTurn(key: string, holder: string, ttlMs: number): Promise<number>;
  meReleaseTurn(key: string, holder: string): Promise<number>;
}

export class RetentionTurn {
  private readonly holder = randomBytes(8).toString('hex');

  constructor(
    private readonly redis: Redis,
    /** How long the turn stays with an instance that stops sweeping (it died): two sweep intervals. */
    private readonly ttlMs: number,
  ) {
    redis.defineCommand('meTakeTurn', { numberOfKeys: 1, lua: TAKE_SCRIPT });
    redis.defineCommand('meReleaseTurn', { numberOfKeys: 1, lua: RELEASE_SCRIPT });
  }

  /** Whether this instance has the turn now; false too while Redis is away (nobody sweeps then). */
  async take(): Promise<boolean> {
    const commands = this.redis as unknown as TurnCommands;
    try {
      return (await commands.meTakeTurn(TURN, this.holder, this.ttlMs)) === 1;
    } catch {
      return false;
    }
  }

  /** Gives the turn back if this instance has it (a normal stop); Redis away: it lapses by itself. */
  async release(): Promise<void> {
    const commands = this.redis as unknown as TurnCommands;
    await commands.meReleaseTurn(TURN, this.holder).catch(() => undefined);
  }
}
