/**
 * Live reads: GET /api/cnc/<name> asks the machine itself, through its driver,
 * rather than the actor caches. Each interface is one row of LIVE_READS: the
 * item family it reads, the optional inputs it takes and how the driver's
 * value becomes the answer. Resolution, connection check and timeout live in
 * machine-reads.ts.
 */
import type { GatewayContext } from '../../core/roles/gateway/context.js';
import type { DriverClient, FamilyValues, ReadOptions, ReadableFamily, ToolLifeRecord } from '../../core/driver-seam/driver.js';
import type { MachineSnapshot } from '../../core/roles/gateway/fleet/machine-snapshot.js';
import type { CallContext, EntryOutput, InterfaceEntry } from '../../core/interfaces/registry.js';
import { LIVE_READS as LIVE_READ_ENTRIES, type LiveReadInput } from '../../core/roles/gateway/contract/live-reads.js';
import { requestMachine } from './machine-reads.js';
import { programAnswer } from './program-files.js';
import { inSpan, tracingEnabled } from '../../core/telemetry/tracing.js';

function readOptions(input: LiveReadInput): ReadOptions {
  const { channel, toolNum, groupNum, offsetNum, dirAtCNC, subDir, startPrgNo } = input;
  return { channel, toolNum, groupNum, offsetNum, dir: dirAtCNC, subDir, startPrgNo };
}

/** One live read: its entry in the contract, the item family it reads, and how the driver's value becomes the answer. */
interface LiveRead {
  name: string;
  entry: InterfaceEntry;
  family: ReadableFamily;
  read(client: Pick<DriverClient, 'read'>, options: ReadOptions, view: MachineSnapshot): Promise<object>;
}

/** What a live read adds to the driver's value in every answer. */
type LiveReadHead = 'machineID' | 'readAt';

function liveRead<F extends ReadableFamily, E extends InterfaceEntry>(spec: { entry: E; family: F; result(value: FamilyValues[F], view: MachineSnapshot): Omit<EntryOutput<E>, LiveReadHead> }): LiveRead {
  return {
    name: spec.entry.path.slice('/api/cnc/'.length),
    entry: spec.entry,
    family: spec.family,
    read: async (client, options, view) => {
      if (!tracingEnabled()) return spec.result(await client.read(spec.family, options), view);
      // The driver request of a live read, under the request's span (docs/tracing.md).
      const attributes = { 'cncgw.machine.id': view.config.machineID, 'cncgw.protocol': view.config.driver };
      return spec.result(await inSpan(`read ${spec.family}`, { kind: 'client', childOnly: true, attributes }, () => client.read(spec.family, options)), view);
    },
  };
}

/** The remaining life in the record's unit, never negative. */
const remaining = (tool: ToolLifeRecord): number => Math.max(0, tool.limit - tool.used);

export const LIVE_READS: readonly LiveRead[] = [
  liveRead({
    entry: LIVE_READ_ENTRIES.readCNCStatusDetails,
    family: 'status',
    result: (status, view) => ({ ...status, state: view.derived.state, reason: view.derived.reason, statusStale: view.derived.statusStale }),
  }),
  liveRead({
    entry: LIVE_READ_ENTRIES.readAlarm,
    family: 'alarm',
    result: (alarms) => ({ alarms }),
  }),
  liveRead({
    entry: LIVE_READ_ENTRIES.readPosition,
    family: 'position',
    result: (axes) => ({ axes }),
  }),
  liveRead({
    entry: LIVE_READ_ENTRIES.readLoad,
    family: 'load',
    result: (loads) => ({ loads }),
  }),
  liveRead({
    entry: LIVE_READ_ENTRIES.readFeedAndSpindle,
    family: 'feedAndSpindle',
    result: (feed) => ({ ...feed }),
  }),
  liveRead({
    entry: LIVE_READ_ENTRIES.readCurrentToolNumber,
    family: 'toolNumber',
    result: (tool) => ({ ...tool }),
  }),
  liveRead({
    entry: LIVE_READ_ENTRIES.readTimeData,
    family: 'timeData',
    result: (time) => ({ ...time }),
  }),
  liveRead({
    entry: LIVE_READ_ENTRIES.readCount,
    family: 'count',
    result: (count) => ({ ...count }),
  }),
  liveRead({
    entry: LIVE_READ_ENTRIES.readToolLife,
    family: 'toolLife',
    result: (tools) => ({ tools: tools.map((t) => ({ toolNum: t.toolNum, groupNum: t.groupNum, remainingPercent: t.remainingPercent })) }),
  }),
  liveRead({
    entry: LIVE_READ_ENTRIES.readToolLifeDetails,
    family: 'toolLife',
    result: (tools) => ({ tools: tools.map((t) => ({ ...t, remaining: remaining(t) })) }),
  }),
  liveRead({
    entry: LIVE_READ_ENTRIES.readProgramList,
    family: 'programList',
    result: (programs) => ({ programs }),
  }),
  liveRead({
    entry: LIVE_READ_ENTRIES.readCurrentProgram,
    family: 'currentProgram',
    result: ({ content, ...program }) => ({ ...program, ...programAnswer(content) }),
  }),
];

function defineLiveRead(ctx: GatewayContext, spec: LiveRead): void {
  ctx.interfaces.implement(spec.entry, {
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
