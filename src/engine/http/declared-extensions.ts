// GET /v2/extensions: the extensions this engine implements, so that a client that reaches it through
// a load balancer, as a remote service, knows it may send them (docs/interface.md#declared-extensions).
// Like /healthz it asks no key and counts against no limit: it says nothing about anyone's media.
import type { ServerResponse } from 'node:http';
import { ENGINE_EXTENSIONS } from '../../contract/extensions';
import { sendJson } from './http-error';

export function answerDeclaredExtensions(res: ServerResponse): void {
  sendJson(res, 200, { extensions: ENGINE_EXTENSIONS }, { 'cache-control': 'no-store' });
}
