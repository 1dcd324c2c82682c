// media-enhance-wait: holds a message until its media is COMPLETED; a failed media or a timeout goes
// to Catch nodes with the original msg (media_uid kept, so a flow can retry). Each wait is kept on disk
// until its message is delivered, so a restart or a redeploy resumes it instead of ending it.
import { MAX_TIMER_MS } from '../client/clock';
import { mediaNode } from './media-node';
import { showMediaStatus } from './message-jobs';
import { remainingMs } from './message-keeper';
import { inputError } from './input-error';
import { readMediaUid } from './msg-inputs';

export default mediaNode(
  'media-enhance-wait',
  { keepsMessages: true, finishesMedia: true },
  ({ def, service, keeper, t }) => {
    const timeout = def.timeout === undefined || def.timeout === '' ? undefined : Number(def.timeout);
    const checkSettings = () => {
      if (timeout !== undefined && !(timeout > 0 && timeout * 1000 <= MAX_TIMER_MS)) {
        const setting = { prop: 'timeout', label: t('media-enhance-wait.setting.timeout') };
        throw inputError(
          t,
          setting,
          def.timeout,
          t('media-enhance-wait.error.timeout', { max: Math.floor(MAX_TIMER_MS / 1000) }),
        );
      }
    };
    return {
      checkSettings,
      firstStatus: { text: t('media-enhance-wait.status.waiting') },
      handle: async (job) => {
        checkSettings();
        const uid = readMediaUid(t, job.msg, { orPayload: true });
        job.noteMedia(uid);
        const mediaSince = await keeper.keep(job, uid);
        const timeoutMs = timeout === undefined ? service.waitTimeoutMs() : timeout * 1000;
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
