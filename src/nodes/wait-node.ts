// media-enhance-wait: holds a message until its media is COMPLETED; a failed media or a timeout goes
// to Catch nodes with the original msg (media_uid kept, so a flow can retry). Each wait is kept on disk
// until its message is delivered, so a restart or a redeploy resumes it instead of ending it.
import { mediaNode } from './media-node';
import { showMediaStatus } from './message-jobs';
import { remainingMs } from './message-keeper';
import { readMediaUid } from './msg-inputs';
import type { NodeDef } from './red';
import type { Translate } from './texts';
import { readTimeoutMs, TIMEOUT_SECONDS } from './timeout-setting';

/** The node's own timeout in ms (timeout-setting.ts), undefined for the config node's default. */
export function readWaitTimeoutMs(t: Translate, def: NodeDef): number | undefined {
  const setting = { prop: 'timeout', label: t('media-enhance-wait.setting.timeout') };
  const { min, max } = TIMEOUT_SECONDS;
  const rule = t('media-enhance-wait.error.timeout', { min, max });
  return readTimeoutMs(t, setting, def.timeout, rule);
}

export default mediaNode(
  'media-enhance-wait',
  { keepsMessages: true, finishesMedia: true },
  ({ def, service, keeper, t }) => {
    const checkSettings = () => readWaitTimeoutMs(t, def);
    return {
      checkSettings,
      firstStatus: { text: t('media-enhance-wait.status.waiting') },
      handle: async (job) => {
        const timeout = checkSettings();
        const uid = readMediaUid(t, job.msg, { orPayload: true });
        job.noteMedia(uid);
        const mediaSince = await keeper.keep(job, uid);
        const timeoutMs = timeout ?? service.waitTimeoutMs();
        const client = await service.client();
        const metadata = await client.waitForCompletion(uid, {
          signal: job.signal,
          // A wait resumed after a restart keeps its first deadline.
          timeoutMs: remainingMs(timeoutMs, mediaSince),
          onStatus: showMediaStatus(job),
        });
        job.msg.media_uid = uid;
        job.msg.payload = metadata;
        job.media = metadata;
        return job.msg;
      },
    };
  },
);
