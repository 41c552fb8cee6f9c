/** The gateway's task-data interfaces: the fleet snapshot and one machine's or group's cached sample (docs/api.md, "Task data"). */
import { z } from 'zod';
import { defineEntry, queryInt, queryList } from '../../../interfaces/registry.js';
import { batchReadErrorsOutput, batchReadTaskDataOutput, otherTaskEntrySchema, statusEntrySchema } from '../api-outputs.js';
import { GROUP_TASK_CLASSES, MACHINE_TASK_CLASSES, groupIdSchema, machineIdSchema } from '../machine-config.js';

const machineIDsInput = queryList(machineIdSchema).optional().describe('machineIDs, comma-separated; omit for every machine');
const sinceRevisionInput = queryInt()
  .min(0)
  .max(Number.MAX_SAFE_INTEGER)
  .optional()
  .describe('the revision of an earlier answer: answer only the entries changed after it, as {revision, full, entries, removed} (a gateway extension; docs/api.md)');

const tagInput = z.string().max(256).optional().describe('a free label echoed back in the answer, e.g. to match answers to requests');
const tagOutput = z.string().optional().describe('the tag given, echoed back');

export const TASK_DATA = {
  batchReadTaskData: defineEntry({
    path: '/api/task/batchReadTaskData',
    method: 'GET',
    summary:
      'The cached latest sample of one data class for many machines, from the actor caches. For CNCStatus each entry also carries the derived state, its reason and statusStale; with sinceRevision (CNCStatus only), only the entries changed after that revision.',
    tags: ['task data'],
    input: z.object({ type: z.enum(MACHINE_TASK_CLASSES), machineIDs: machineIDsInput, sinceRevision: sinceRevisionInput }).strict(),
    output: batchReadTaskDataOutput,
    errors: ['GENERAL_MACHINE_ID_NOT_EXISTED'],
  }),
  batchReadErrors: defineEntry({
    path: '/api/task/batchReadErrors',
    method: 'GET',
    summary: 'Connection health and the latest error of each task for many machines, from the actor caches; with sinceRevision, only the entries changed after that revision.',
    tags: ['task data'],
    input: z.object({ machineIDs: machineIDsInput, sinceRevision: sinceRevisionInput }).strict(),
    output: batchReadErrorsOutput,
    errors: ['GENERAL_MACHINE_ID_NOT_EXISTED'],
  }),
  readTaskData: defineEntry({
    path: '/api/task/readTaskData',
    method: 'GET',
    summary:
      'The cached latest sample of one data class for one machine, from its actor cache (never contacts the machine). Fails with 1301 when the task is not enabled and 1303 before its first sample.',
    tags: ['task data'],
    input: z
      .object({
        type: z.enum(MACHINE_TASK_CLASSES),
        machineID: machineIdSchema.describe('the machine; GET /api/config/machines lists them'),
        tag: tagInput,
      })
      .strict(),
    output: z.discriminatedUnion('type', [statusEntrySchema.extend({ tag: tagOutput }), otherTaskEntrySchema.extend({ tag: tagOutput })]),
    errors: ['GENERAL_MACHINE_ID_NOT_EXISTED', 'TASK_NOT_ENABLED', 'TASK_NOT_READY', 'MACHINE_NOT_CONNECTED', 'DRIVER_TIMEOUT', 'DRIVER_REQUEST_FAILED'],
  }),
  readGroupTaskData: defineEntry({
    path: '/api/task/readGroupTaskData',
    method: 'GET',
    summary:
      'The cached latest figures of one group class, refreshed by the group’s own task every tasks.<class>.intervalMs: GroupCount (parts), GroupCumulativeTime (power-on, operating, cutting seconds) or GroupOEE (times and counts added, factors recomputed), with time = when they were computed. Members without a sample are listed under membersWithoutData. Fails with 1301 when the group task is not enabled and 1303 before its first refresh.',
    tags: ['task data'],
    input: z
      .object({
        type: z.enum(GROUP_TASK_CLASSES),
        groupID: groupIdSchema.describe('the group; GET /api/config/groups lists them'),
        tag: tagInput,
      })
      .strict(),
    output: z
      .looseObject({
        groupID: z.string(),
        type: z.enum(GROUP_TASK_CLASSES),
        time: z.number().optional().describe('when the figures were computed, unix ms'),
        tag: tagOutput,
        error: z.strictObject({ errorCode: z.number().int(), errorMsg: z.string(), at: z.number() }).nullable().describe('the latest refresh’s error, when it failed after earlier figures'),
      })
      .describe('and the figures of the class (docs/group-tasks.md), with membersWithoutData'),
    errors: ['GENERAL_GROUP_ID_NOT_EXISTED', 'TASK_NOT_ENABLED', 'TASK_NOT_READY'],
  }),
};
