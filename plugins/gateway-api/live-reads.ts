/**
 * Live reads: GET /api/cnc/<name> asks the machine itself, through its driver,
 * rather than the actor caches. Each interface is one row of LIVE_READS: the
 * item family it reads, the optional inputs it takes and how the driver's
 * value becomes the answer. Resolution, connection check and timeout live in
 * machine-reads.ts.
 */
import { z } from 'zod';
import { machineIdSchema } from '../../core/roles/gateway/machine-config.js';
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import type { DriverClient, FamilyValues, ReadOptions, ReadableFamily, ToolLifeRecord } from '../../core/driver.js';
import type { MachineSnapshot } from '../../core/roles/gateway/fleet/machine-snapshot.js';
import { queryInt, type CallContext, type OutputOf } from '../../core/interfaces.js';
import { currentProgramOutput } from '../../core/roles/gateway/api-outputs.js';
import { requestMachine } from './machine-reads.js';
import { programAnswer } from './program-files.js';

/** Every input a live read may take; each interface picks machineID, channel and the ones it lists. */
const liveReadInput = z
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

type LiveReadInput = z.output<typeof liveReadInput>;
/** Inputs an interface may add to machineID and channel. */
type OptionalInput = Exclude<keyof LiveReadInput, 'machineID' | 'channel'>;

function readOptions(input: LiveReadInput): ReadOptions {
  const { channel, toolNum, groupNum, offsetNum, dirAtCNC, subDir, startPrgNo } = input;
  return { channel, toolNum, groupNum, offsetNum, dir: dirAtCNC, subDir, startPrgNo };
}

/** One live-read interface, its family's value type erased once `result` is bound to it. */
interface LiveRead {
  name: string;
  family: ReadableFamily;
  summary: string;
  inputs: readonly OptionalInput[];
  /** The answer's schema, where the interface's output is declared (core/roles/gateway/api-outputs.ts). */
  output?: z.ZodType;
  read(client: Pick<DriverClient, 'read'>, options: ReadOptions, view: MachineSnapshot): Promise<object>;
}

function liveRead<F extends ReadableFamily>(spec: {
  name: string;
  family: F;
  summary: string;
  inputs?: readonly OptionalInput[];
  output?: z.ZodType;
  result(value: FamilyValues[F], view: MachineSnapshot): object;
}): LiveRead {
  return {
    name: spec.name,
    family: spec.family,
    summary: spec.summary,
    inputs: spec.inputs ?? [],
    ...(spec.output ? { output: spec.output } : {}),
    read: async (client, options, view) => spec.result(await client.read(spec.family, options), view),
  };
}

/** What a live read adds to the driver's value in every answer. */
type LiveReadHead = 'machineID' | 'readAt';

const TOOL_FILTERS = ['toolNum', 'groupNum', 'offsetNum'] as const;
const PROGRAM_DIR = ['dirAtCNC', 'subDir'] as const;

/** The remaining life in the record's unit, never negative. */
const remaining = (tool: ToolLifeRecord): number => Math.max(0, tool.limit - tool.used);

export const LIVE_READS: readonly LiveRead[] = [
  liveRead({
    name: 'readCNCStatusDetails',
    family: 'status',
    summary: 'The machine’s status read live (execution state, mode, alarm level, program), with the derived state, its reason and statusStale.',
    result: (status, view) => ({ ...status, state: view.derived.state, reason: view.derived.reason, statusStale: view.derived.statusStale }),
  }),
  liveRead({
    name: 'readAlarm',
    family: 'alarm',
    summary: 'The machine’s active alarms and warnings, read live.',
    result: (alarms) => ({ alarms }),
  }),
  liveRead({
    name: 'readPosition',
    family: 'position',
    summary: 'Absolute, machine and relative position and distance to go of every axis, read live.',
    result: (axes) => ({ axes }),
  }),
  liveRead({
    name: 'readLoad',
    family: 'load',
    summary: 'Load of every axis and spindle as a percentage of rated load, read live.',
    result: (loads) => ({ loads }),
  }),
  liveRead({
    name: 'readFeedAndSpindle',
    family: 'feedAndSpindle',
    summary: 'Actual feed rate (mm/min) and spindle speed (rpm) with their overrides, read live.',
    result: (feed) => ({ ...feed }),
  }),
  liveRead({
    name: 'readCurrentToolNumber',
    family: 'toolNumber',
    summary: 'The tool (and offset) number in use, read live.',
    result: (tool) => ({ ...tool }),
  }),
  liveRead({
    name: 'readTimeData',
    family: 'timeData',
    summary: 'The controller’s cumulative power-on, operating and cutting time and the current cycle time, in seconds, read live.',
    result: (time) => ({ ...time }),
  }),
  liveRead({
    name: 'readCount',
    family: 'count',
    summary: 'The part counters (partCount, partsTotal, partsRequired) and the last cycle, read live.',
    result: (count) => ({ ...count }),
  }),
  liveRead({
    name: 'readToolLife',
    family: 'toolLife',
    summary: 'Remaining life of each tool as a percentage, read live; filter by toolNum, groupNum or offsetNum, or omit them for every tool.',
    inputs: TOOL_FILTERS,
    result: (tools) => ({ tools: tools.map((t) => ({ toolNum: t.toolNum, groupNum: t.groupNum, remainingPercent: t.remainingPercent })) }),
  }),
  liveRead({
    name: 'readToolLifeDetails',
    family: 'toolLife',
    summary: 'Every tool-life field the controller gives (used, limit, unit, offset) plus the remaining life, read live; filter as readToolLife.',
    inputs: TOOL_FILTERS,
    result: (tools) => ({ tools: tools.map((t) => ({ ...t, remaining: remaining(t) })) }),
  }),
  liveRead({
    name: 'readProgramList',
    family: 'programList',
    summary: 'The program files in a controller directory (default: the program directory), read live.',
    inputs: [...PROGRAM_DIR, 'startPrgNo'],
    result: (programs) => ({ programs }),
  }),
  liveRead({
    name: 'readCurrentProgram',
    family: 'currentProgram',
    summary: 'The selected program, read live: directory, file name, the whole program as text (content, in the encoding named: UTF-8, or Windows-1252 for bytes that are not UTF-8) and as bytes (contentBase64), its size and sha256, and the block being executed when known.',
    inputs: PROGRAM_DIR,
    output: currentProgramOutput,
    result: ({ content, ...program }): Omit<OutputOf<'/api/cnc/readCurrentProgram'>, LiveReadHead> => ({ ...program, ...programAnswer(content) }),
  }),
];

function defineLiveRead(ctx: GatewayContext, spec: LiveRead): void {
  const mask = Object.fromEntries(['machineID', 'channel', ...spec.inputs].map((k) => [k, true as const])) as {
    [K in keyof LiveReadInput]?: true;
  };
  ctx.interfaces.define({
    path: `/api/cnc/${spec.name}` as const,
    method: 'GET',
    summary: spec.summary,
    tags: ['live read'],
    input: liveReadInput.pick(mask),
    ...(spec.output ? { output: spec.output } : {}),
    handler: (input: LiveReadInput, call: CallContext) =>
      requestMachine(ctx, { machineID: input.machineID, family: spec.family, what: spec.name, logger: call.logger }, async ({ client, view }) => {
        const data = await spec.read(client, readOptions(input), view);
        return { machineID: input.machineID, readAt: ctx.now(), ...data };
      }),
  });
}

/** Defines GET /api/cnc/<name> for every row of LIVE_READS. */
export function defineLiveReadInterfaces(ctx: GatewayContext): void {
  for (const spec of LIVE_READS) defineLiveRead(ctx, spec);
}
