// Node-RED for the soak: the packed package installed into a user dir, settings written once, and the
// runtime started on that dir (again after a crash, the same way a service manager restarts it).
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { join } from 'node:path';
import { packPackage, spawnNodeRed, unpackPackage, waitForNodeRed } from '../test/fixtures/node-red-process';
import { supervise, type RunningProcess } from './soak-processes';

export interface NodeRedSetup {
  userDir: string;
  settingsFile: string;
  baseUrl: string;
  /** The package as installed in the user dir. */
  installedPackage: string;
}

export async function installNodeRed(userDir: string, port: number, workingDirectory: string): Promise<NodeRedSetup> {
  await fsp.mkdir(userDir, { recursive: true });
  const installedPackage = unpackPackage(packPackage(join(userDir, 'packs')), userDir);
  const settingsFile = join(userDir, 'settings.js');
  await fsp.writeFile(
    settingsFile,
    `module.exports = {
  uiHost: '127.0.0.1',
  uiPort: ${port},
  flowFile: 'flows.json',
  credentialSecret: ${JSON.stringify(randomBytes(24).toString('hex'))},
  fileWorkingDirectory: ${JSON.stringify(workingDirectory)},
  logging: { console: { level: 'info', metrics: false, audit: false } },
  editorTheme: { projects: { enabled: false }, tours: false, palette: { catalogues: [] } },
  telemetry: { enabled: false, updateNotification: false },
  diagnostics: { enabled: false },
};
`,
  );
  return { userDir, settingsFile, baseUrl: `http://127.0.0.1:${port}`, installedPackage };
}

export async function startNodeRed(setup: NodeRedSetup, logFile: string): Promise<RunningProcess> {
  const nodeRed = supervise(spawnNodeRed(setup.userDir, setup.settingsFile), logFile);
  try {
    await waitForNodeRed(nodeRed.child, setup.baseUrl, nodeRed.output, 90_000);
  } catch (err) {
    await nodeRed.crash();
    throw err;
  }
  return nodeRed;
}
