/** Parameters several tools share, described for an LLM: type, default and where the IDs come from. */
import { groupIdSchema, machineIdSchema } from '../../../core/roles/gateway/machine-config.js';
import { TIME_PARAM_SUMMARY, timeParamSchema } from '../../../core/interfaces/time-params.js';

export const machineID = machineIdSchema.describe('machineID from list_machines');
export const groupID = groupIdSchema.describe('groupID from list_groups');
export const start = timeParamSchema.describe(`Window start in the gateway time zone: ${TIME_PARAM_SUMMARY}`);
export const end = timeParamSchema.optional().describe(`Window end (default now): ${TIME_PARAM_SUMMARY}`);
