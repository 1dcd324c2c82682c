// The local engine as the client tests meet it: started on a free loopback port with a fresh data folder,
// with its access log kept so a test can see what reached the service.
import { promises as fsp } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEngine, type EngineOptions } from '../../src/engine';
import { makeWav, makeMp4 } from '../fixtures/media';

export { makeWav, makeMp4 };

export interface LoggedRequest {
  at: number;
  method: string;
  path: string;
  status: number;
}

export interface ClientTestEngine {
  url: string;
  apiKey: string;
  /** Every request the engine answered, in order. */
  requests(): LoggedRequest[];
  makeMp4(): Buffer;
  close(): Promise<void>;
}

export async function startClientTestEngine(options: Partial<EngineOptions> = {}): Promise<ClientTestEngine> {
  const dataDir = await fsp.mkdtemp(join(tmpdir(), 'me-engine-'));
  const apiKey = `key-${randomBytes(12).toString('hex')}`;
  const log: LoggedRequest[] = [];
  const engine = await startEngine({
    apiKeys: [apiKey],
    dataDir,
    // Expected failures (a refused fetch) would otherwise print to the test run's standard error.
    onErrorLine: () => undefined,
    ...options,
    onRequest: (entry) => {
      log.push({ ...entry });
      options.onRequest?.(entry);
    },
  });
  return {
    url: engine.url,
    apiKey,
    requests: () => [...log],
    makeMp4,
    close: async () => {
      await engine.close();
      await fsp.rm(dataDir, { recursive: true, force: true });
    },
  };
}
