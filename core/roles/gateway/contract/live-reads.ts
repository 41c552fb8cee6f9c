/**
 * The gateway's live reads: GET /api/cnc/<name> asks the machine itself,
 * through its driver (docs/api.md, "Live reads"). One entry per read, made
 * from one row each: the inputs it takes beside machineID and channel, and
 * what its answer holds beside machineID and readAt.
 */
import { z } from 'zod';
import { defineEntry, queryInt, type InterfaceEntry } from '../../../interfaces/registry.js';
import { currentProgramOutput } from '../api-outputs.js';
import { DERIVED_STATES } from '../fleet/derive-state.js';
import { machineIdSchema } from '../machine-config.js';
import { FAMILY_VALUES } from './family-values.js';

/** Every input a live read may take; each read picks machineID, channel and the ones it lists. */
export const liveReadInput = z
  .object({
    machineID: machineIdSchema.describe('the machine to read; GET /api/config/machines lists them'),
    channel: queryInt().min(1).optional().describe('controller path (channel), 1-based; omit for the first'),
    toolNum: queryInt().min(0).optional().describe('only this tool number'),
    groupNum: queryInt().min(0).optional().describe('only tools of this tool-life group'),
    offsetNum: queryInt().min(0).optional().describe('only tools with this offset number'),
    dirAtCNC: z.string().min(1).max(1024).optional().describe('directory on the controller; omit for the default program directory'),
    subDir: z.string().min(1).max(1024).optional().describe('sub-directory below dirAtCNC'),
    startPrgNo: queryInt().min(0).optional().describe('only programs numbered from this O-number on'),
  })
  .strict();

export type LiveReadInput = z.output<typeof liveReadInput>;
/** Inputs a read may add to machineID and channel. */
type OptionalInput = Exclude<keyof LiveReadInput, 'machineID' | 'channel'>;

const TOOL_FILTERS = ['toolNum', 'groupNum', 'offsetNum'] as const;
const PROGRAM_DIR = ['dirAtCNC', 'subDir'] as const;

/** What every live read's answer starts with. */
const head = { machineID: z.string(), readAt: z.number().describe('unix ms') };

/** The entry of GET /api/cnc/<name>, answering `body` beside machineID and readAt. */
function liveRead<N extends string, B extends z.ZodRawShape>(name: N, summary: string, body: B, inputs: readonly OptionalInput[] = []) {
  const mask = Object.fromEntries(['machineID', 'channel', ...inputs].map((k) => [k, true as const])) as { [K in keyof LiveReadInput]?: true };
  return defineEntry({
    path: `/api/cnc/${name}` as `/api/cnc/${N}`,
    method: 'GET',
    summary,
    tags: ['live read'],
    input: liveReadInput.pick(mask),
    output: z.strictObject({ ...head, ...body }),
    errors: ['GENERAL_MACHINE_ID_NOT_EXISTED', 'DRIVER_FAMILY_UNSUPPORTED', 'MACHINE_NOT_CONNECTED', 'DRIVER_TIMEOUT', 'DRIVER_REQUEST_FAILED'],
  });
}

const toolLifeRow = FAMILY_VALUES.toolLife.element;

export const LIVE_READS = {
  readCNCStatusDetails: liveRead(
    'readCNCStatusDetails',
    'The machine’s status read live (execution state, mode, alarm level, program), with the derived state, its reason and statusStale.',
    { ...FAMILY_VALUES.status.shape, state: z.enum(DERIVED_STATES), reason: z.string(), statusStale: z.boolean() },
  ),
  readAlarm: liveRead('readAlarm', 'The machine’s active alarms and warnings, read live.', { alarms: FAMILY_VALUES.alarm }),
  readPosition: liveRead('readPosition', 'Absolute, machine and relative position and distance to go of every axis, read live.', { axes: FAMILY_VALUES.position }),
  readLoad: liveRead('readLoad', 'Load of every axis and spindle as a percentage of rated load, read live.', { loads: FAMILY_VALUES.load }),
  readFeedAndSpindle: liveRead('readFeedAndSpindle', 'Actual feed rate (mm/min) and spindle speed (rpm) with their overrides, read live.', FAMILY_VALUES.feedAndSpindle.shape),
  readCurrentToolNumber: liveRead('readCurrentToolNumber', 'The tool (and offset) number in use, read live.', FAMILY_VALUES.toolNumber.shape),
  readTimeData: liveRead(
    'readTimeData',
    'The controller’s cumulative power-on, operating and cutting time and the current cycle time, in seconds, read live.',
    FAMILY_VALUES.timeData.shape,
  ),
  readCount: liveRead('readCount', 'The part counters (partCount, partsTotal, partsRequired) and the last cycle, read live.', FAMILY_VALUES.count.shape),
  readToolLife: liveRead(
    'readToolLife',
    'Remaining life of each tool as a percentage, read live; filter by toolNum, groupNum or offsetNum, or omit them for every tool.',
    { tools: z.array(toolLifeRow.pick({ toolNum: true, groupNum: true, remainingPercent: true })) },
    TOOL_FILTERS,
  ),
  readToolLifeDetails: liveRead(
    'readToolLifeDetails',
    'Every tool-life field the controller gives (used, limit, unit, offset) plus the remaining life, read live; filter as readToolLife.',
    { tools: z.array(toolLifeRow.extend({ remaining: z.number().describe('limit − used in the record’s unit, never negative') })) },
    TOOL_FILTERS,
  ),
  readProgramList: liveRead(
    'readProgramList',
    'The program files in a controller directory (default: the program directory), read live.',
    { programs: FAMILY_VALUES.programList },
    [...PROGRAM_DIR, 'startPrgNo'],
  ),
  readCurrentProgram: liveRead(
    'readCurrentProgram',
    'The selected program, read live: directory, file name, the whole program as text (content, in the encoding named: UTF-8, or Windows-1252 for bytes that are not UTF-8) and as bytes (contentBase64), its size and sha256, and the block being executed when known.',
    currentProgramOutput.omit({ machineID: true, readAt: true }).shape,
    PROGRAM_DIR,
  ),
} satisfies Record<string, InterfaceEntry>;
