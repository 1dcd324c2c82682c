// media-enhance-wait: holds a message until its media is COMPLETED; a failed media or a timeout goes
// to Catch nodes with the original msg (media_uid kept, so a flow can retry). Each wait is kept on disk
// until its message is delivered, so a restart or a redeploy resumes it instead of ending it.
import { MAX_TIMER_MS } from '../client/clock';
import { handleMessages, showMediaStatus } from './message-jobs';
import { MessageKeeper, remainingMs } from './message-keeper';
import { inputError, readMediaUid } from './msg-inputs';
import { checkSettingsAtDeploy, serviceOf } from './node-service';
import type { NodeDef, RedApi, RedNode } from './red';

export default function register(RED: RedApi): void {
  RED.nodes.registerType('media-enhance-wait', function (this: RedNode, def: NodeDef) {
    RED.nodes.createNode(this, def);
    const service = serviceOf(RED, this, def);
    const timeout = def.timeout === undefined || def.timeout === '' ? undefined : Number(def.timeout);
    const checkTimeout = () => {
      if (timeout !== undefined && !(timeout > 0 && timeout * 1000 <= MAX_TIMER_MS)) {
        throw inputError(
          'setting "timeout (s)"',
          def.timeout,
          "must be a number of seconds from 1 to 2147483, or empty for the config node's default",
        );
      }
    };
    checkSettingsAtDeploy(this, checkTimeout);
    const keeper = new MessageKeeper(RED, this, def);

    const jobs = handleMessages(
      this,
      async (job) => {
        checkTimeout();
        const uid = readMediaUid(job.msg, { orPayload: true });
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
      { text: 'waiting' },
    );
    keeper.resumeInto(jobs);
  });
}
