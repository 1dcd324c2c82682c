// The service a config node describes, read from what its editor saved: local or remote, and the
// options of its client. A bad value is reported with the setting's label, its value and the rule, the
// same way as a bad msg property.
import type { EndpointId } from '../contract/endpoints';
import { DEREVERB, LOUDNESS_ONLY, OUTPUT_ENCODING, SEVERAL_OUTPUTS, TRIM_PAUSES } from '../contract/extensions';
import { fieldName, InputError, inputError } from './input-error';
import type { NodeDef } from './red';
import type { Translate } from './texts';
import { readTimeoutMs, TIMEOUT_SECONDS } from './timeout-setting';

export interface ServiceConfig {
  service: 'local' | 'remote';
  baseUrl?: string;
  allowInsecureHttp: boolean;
  /** Only the operations whose limit the user set; the rest keep the interface's defaults. */
  limits: Partial<Record<EndpointId, number>>;
  requestTimeoutMs?: number;
  /** Default of every wait node that uses this config; undefined waits as long as the media is in progress. */
  waitTimeoutMs?: number;
  /** Shares the limits with other instances through this Redis; undefined: this instance keeps its own. */
  sharedLimits?: { redisUrl: string; keyPrefix?: string };
  /**
   * A remote service's extensions: 'ask' it (the default, and for a config node saved before the setting
   * existed), or the ones ticked in the dialog.
   */
  extensions?: readonly string[] | 'ask';
}

/** The editor property of each operation's limit, and the key of its label. */
export const LIMIT_FIELDS: ReadonlyArray<{ endpoint: EndpointId; prop: string; label: string }> = [
  { endpoint: 'uploadMedia', prop: 'limitUpload', label: 'media-enhance-config.setting.limitUpload' },
  { endpoint: 'getMetadata', prop: 'limitMetadata', label: 'media-enhance-config.setting.limitMetadata' },
  { endpoint: 'downloadFile', prop: 'limitDownload', label: 'media-enhance-config.setting.limitDownload' },
  { endpoint: 'enhanceAudio', prop: 'limitEnhanceAudio', label: 'media-enhance-config.setting.limitEnhanceAudio' },
  { endpoint: 'enhanceVideo', prop: 'limitEnhanceVideo', label: 'media-enhance-config.setting.limitEnhanceVideo' },
];

function isEmpty(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === 'string' && value.trim() === '');
}

export function readServiceConfig(t: Translate, def: NodeDef): ServiceConfig {
  const setting = (prop: string, labelKey: string) => ({ prop, label: t(labelKey) });
  const positiveInteger = (prop: string, labelKey: string): number | undefined => {
    const value = def[prop];
    if (isEmpty(value)) return undefined;
    const number = Number(value);
    if (!Number.isInteger(number) || number <= 0) {
      throw inputError(t, setting(prop, labelKey), value, t('media-enhance-config.error.wholeAboveZero'));
    }
    return number;
  };
  const service = def.mode === 'remote' ? 'remote' : 'local';
  const limits: Partial<Record<EndpointId, number>> = {};
  for (const { endpoint, prop, label } of LIMIT_FIELDS) {
    const limit = positiveInteger(prop, label);
    if (limit !== undefined) limits[endpoint] = limit;
  }
  const seconds = (prop: string, labelKey: string, rule: string) =>
    readTimeoutMs(t, setting(prop, labelKey), def[prop], rule);
  const { min, max } = TIMEOUT_SECONDS;
  const config: ServiceConfig = {
    service,
    allowInsecureHttp: def.allowInsecureHttp === true,
    limits,
    requestTimeoutMs: seconds(
      'requestTimeout',
      'media-enhance-config.setting.requestTimeout',
      t('media-enhance-config.error.requestTimeout', { min, max }),
    ),
    waitTimeoutMs: seconds(
      'waitTimeout',
      'media-enhance-config.setting.waitTimeout',
      t('media-enhance-config.error.waitTimeout', { min, max }),
    ),
  };
  if (service === 'remote') {
    if (isEmpty(def.baseUrl)) {
      const rule = t('media-enhance-config.error.baseUrlRequired');
      throw inputError(t, setting('baseUrl', 'media-enhance-config.setting.baseUrl'), def.baseUrl, rule);
    }
    config.baseUrl = String(def.baseUrl).trim();
    config.sharedLimits = readSharedLimits(t, def);
    config.extensions = readExtensions(def);
  }
  return config;
}

/** What the dialog says the remote service declares: asked of it unless listed there. */
function readExtensions(def: NodeDef): readonly string[] | 'ask' {
  if (def.extensions !== 'listed') return 'ask';
  const listed: string[] = [];
  if (def.declaresOutputEncoding === true) listed.push(OUTPUT_ENCODING);
  if (def.declaresLoudnessOnly === true) listed.push(LOUDNESS_ONLY);
  if (def.declaresTrimPauses === true) listed.push(TRIM_PAUSES);
  if (def.declaresSeveralOutputs === true) listed.push(SEVERAL_OUTPUTS);
  if (def.declaresDereverb === true) listed.push(DEREVERB);
  return listed;
}

/** The Redis through which the limits are shared (a remote service only: the local engine has its own key). */
function readSharedLimits(t: Translate, def: NodeDef): ServiceConfig['sharedLimits'] {
  if (isEmpty(def.redisUrl)) return undefined;
  const redisUrl = String(def.redisUrl).trim();
  let url: URL | undefined;
  try {
    url = new URL(redisUrl);
  } catch {
    url = undefined;
  }
  const refuse = (ruleKey: string) => {
    // The value is not shown: it may carry a password.
    const field = { prop: 'redisUrl', label: t('media-enhance-config.setting.redisUrl') };
    const rule = t(ruleKey);
    return new InputError([t('media-enhance.input.lineWithoutValue', { field: fieldName(t, field), rule })], [field]);
  };
  if (url?.protocol !== 'redis:' && url?.protocol !== 'rediss:') throw refuse('media-enhance-config.error.redisUrl');
  if (url.password !== '') throw refuse('media-enhance-config.error.redisUrlPassword');
  const keyPrefix = isEmpty(def.redisKeyPrefix) ? undefined : String(def.redisKeyPrefix).trim();
  return { redisUrl, keyPrefix };
}
