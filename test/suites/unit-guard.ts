// The unit suite's guard: a unit test starts no process, server, browser or Redis, so while the guard is
// installed every way of starting one throws, naming what was tried. `npm run test:unit` installs it before
// any test file loads (install-unit-guard.ts); suites.test.ts checks that it refuses each way.
import childProcess from 'node:child_process';
import net from 'node:net';

const PROCESS_STARTERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

function refuse(what: string): never {
  throw new Error(
    `a unit test started ${what}; unit tests start no process, server, browser or Redis ` +
      '(take the file out of UNIT_TESTS in test/suites/suites.ts: its area suite runs it)',
  );
}

/** Installs the guard; the function returned takes it away again. */
export function installUnitGuard(): () => void {
  const starters = PROCESS_STARTERS.map((name) => [name, childProcess[name]] as const);
  // Kept to be put back as they were, on their prototypes (so never called unbound).
  const listen = Object.getOwnPropertyDescriptor(net.Server.prototype, 'listen')!;
  const connect = Object.getOwnPropertyDescriptor(net.Socket.prototype, 'connect')!;
  for (const [name] of starters) {
    // The module's exports are looked up at each call (`(0, child_process_1.execFile)(…)`), so this reaches
    // every caller, including promisify(execFile) made after the guard.
    Object.defineProperty(childProcess, name, {
      configurable: true,
      enumerable: true,
      writable: true,
      value: () => refuse(`a process (child_process.${name})`),
    });
  }
  // Every server (http, https, net) listens through net.Server, and every client connection (HTTP, Redis,
  // a browser's debugging socket) connects through net.Socket.
  net.Server.prototype.listen = function guardedListen(): never {
    return refuse('a server (net.Server.listen)');
  };
  net.Socket.prototype.connect = function guardedConnect(): never {
    return refuse('a connection (net.Socket.connect)');
  };
  return () => {
    for (const [name, original] of starters)
      Object.defineProperty(childProcess, name, {
        configurable: true,
        enumerable: true,
        writable: true,
        value: original,
      });
    Object.defineProperty(net.Server.prototype, 'listen', listen);
    Object.defineProperty(net.Socket.prototype, 'connect', connect);
  };
}
