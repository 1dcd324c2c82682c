// The service a config node describes, read from what its editor saved: local or remote, and the
// options of its client. A bad value is reported with the setting's label, its value and the rule, the
// same way as a bad msg property.
import { MAX_TIMER_MS } from '../client/clock';
import type { EndpointId } from '../contract/endpoints';
import { inputError } from './msg-inputs';
import type { NodeDef } from './red';

export interface ServiceConfig {
  service: 'local' | 'remote';
  baseUrl?: string;
  allowInsecureHttp: boolean;
  /** Only the operations whose limit the user set; the rest keep the interface's defaults. */
  limits: Partial<Record<EndpointId, number>>;
  requestTimeoutMs?: number;
  /** Default of every wait node that uses this config; undefined waits as long as the media is in progress. */
  waitTimeoutMs?: number;
}

/** The editor property and label of each operation's limit. */
export const LIMIT_FIELDS: ReadonlyArray<{ endpoint: EndpointId; prop: string; label: string }> = [
  { endpoint: 'uploadMedia', prop: 'limitUpload', label: 'uploads per window' },
  { endpoint: 'getMetadata', prop: 'limitMetadata', label: 'status requests per window' },
  { endpoint: 'downloadFile', prop: 'limitDownload', label: 'downloads per window' },
  { endpoint: 'enhanceAudio', prop: 'limitEnhanceAudio', label: 'enhance audio requests per window' },
  { endpoint: 'enhanceVideo', prop: 'limitEnhanceVideo', label: 'enhance video requests per window' },
];

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

function positiveNumber(def: NodeDef, prop: string, label: string, integer: boolean): number | undefined {
  const value = def[prop];
  if (isEmpty(value)) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number <= 0 || (integer && !Number.isInteger(number))) {
    throw inputError(
      `setting "${label}"`,
      value,
      integer
        ? 'must be a whole number above 0, or empty for the default'
        : 'must be a number above 0, or empty for none',
    );
  }
  return number;
}

export function readServiceConfig(def: NodeDef): ServiceConfig {
  const service = def.mode === 'remote' ? 'remote' : 'local';
  const limits: Partial<Record<EndpointId, number>> = {};
  for (const { endpoint, prop, label } of LIMIT_FIELDS) {
    const limit = positiveNumber(def, prop, label, true);
    if (limit !== undefined) limits[endpoint] = limit;
  }
  const seconds = (prop: string, label: string) => {
    const value = positiveNumber(def, prop, label, false);
    return value === undefined ? undefined : value * 1000;
  };
  const config: ServiceConfig = {
    service,
    allowInsecureHttp: def.allowInsecureHttp === true,
    limits,
    requestTimeoutMs: seconds('requestTimeout', 'request timeout (s)'),
    waitTimeoutMs: seconds('waitTimeout', 'wait timeout (s)'),
  };
  if (config.waitTimeoutMs !== undefined && config.waitTimeoutMs > MAX_TIMER_MS) {
    throw inputError(
      'setting "wait timeout (s)"',
      def.waitTimeout,
      'must be at most 2147483 seconds, or empty to wait as long as it takes',
    );
  }
  if (service === 'remote') {
    if (isEmpty(def.baseUrl)) throw inputError('setting "base URL"', def.baseUrl, 'is required for a remote service');
    config.baseUrl = String(def.baseUrl).trim();
  }
  return config;
}
