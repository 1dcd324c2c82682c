// The last guard against settings that cannot apply together or to this file: the upload route refuses
// them with a 422 before the upload is kept (contract/settings-combinations.ts); a job that reaches the
// processor with one anyway (a record written another way) fails INVALID_SETTINGS before any work.
import { checkSettingsForInput, checkSettingsTogether } from '../../contract/settings-combinations';
import { ProcessingError, type ProcessJob } from './processor';

/** Refuses, before any work, settings the contract's combination rules refuse for the job's file. */
export function refuseImpossibleSettings(job: ProcessJob): void {
  const part = 'media_enhancement';
  const [issue] = [
    ...checkSettingsTogether(job.settings, part),
    ...checkSettingsForInput(job.settings, part, job.input),
  ];
  // Named as the member is in the settings: `trim_pauses_s`, `outputs.1.bitrate_kbps`.
  if (issue) throw new ProcessingError('INVALID_SETTINGS', `${issue.loc.slice(2).join('.')}: ${issue.msg}`);
}
