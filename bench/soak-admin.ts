// Node-RED's admin API as the editor uses it: a full deploy (every node stopped and started again), and
// whether a node's credentials are set (the value itself never leaves the runtime).
import { request } from 'undici';

const TIMEOUT = { headersTimeout: 30_000, bodyTimeout: 30_000 };

/** POST /flows with `Node-RED-Deployment-Type: full`. A node carrying `credentials` sets them; one without keeps its own. */
export async function deployFull(baseUrl: string, flows: object[]): Promise<void> {
  const res = await request(`${baseUrl}/flows`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'node-red-deployment-type': 'full' },
    body: JSON.stringify(flows),
    ...TIMEOUT,
  });
  const text = await res.body.text();
  if (res.statusCode !== 204 && res.statusCode !== 200)
    throw new Error(`full deploy answered ${res.statusCode}: ${text.slice(0, 500)}`);
}

/** GET /credentials/<type>/<id>: `has_<name>` for a password credential. */
export async function hasCredential(baseUrl: string, type: string, id: string, name: string): Promise<boolean> {
  const res = await request(`${baseUrl}/credentials/${type}/${id}`, TIMEOUT);
  const body = (await res.body.json()) as Record<string, unknown>;
  return res.statusCode === 200 && body[`has_${name}`] === true;
}
