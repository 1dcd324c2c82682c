// How an engine of a cluster names itself in the media it processes and in its log: the machine and
// process an operator looks for, and a few random characters so that two engines of one process (or a
// process started again with the same pid) are never taken for one another.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

export function engineName(): string {
  return `${hostname()}/${process.pid}/${randomBytes(3).toString('hex')}`;
}
