/**
 * The two reads of a Streams document: /current (the last observation of
 * each data item, now from the live state or `at=` a past sequence number
 * from a replay started there) and /sample (the observations from `from`,
 * `count` of them, up to `to`, or the last |count| when count is negative),
 * with the header's sequence numbers as cppagent computes them.
 */
import { AgentError, outOfRange } from './agent-error.js';
import type { GatewayReader } from './gateway-reader.js';
import type { LiveState } from './live-state.js';
import { lastObservationsAt, parseRow, replaysAt } from './machine-state.js';
import type { DataItemDef, DeviceModel } from './model.js';
import { VALUE_ITEMS, type MachineReplay } from './replay.js';
import { filterKeyOf, type Checkpoint, type ReplayCheckpoints } from './replay-checkpoints.js';
import { observationSeq, rowOfSeq } from './sequence-numbers.js';
import type { Served } from './served.js';

/** The header's sequence numbers and what the buffer holds. */
export interface SequenceHeader {
  firstSequence: number;
  lastSequence: number;
  nextSequence: number;
  bufferSize: number;
}

export interface StreamAnswer {
  header: SequenceHeader;
  observations: Served[];
}

/** At most this many observations per /sample (and per chunk of a stream). */
export const MAX_COUNT = 10_000;
/** At most this many history rows are read to answer one /sample; nextSequence then says where to go on. */
export const MAX_SCAN_ROWS = 200_000;
const BATCH_ROWS = 5_000;
/** The largest bufferSize the header can carry (its schema type is below 2^32 - 1). */
const MAX_BUFFER_SIZE = 4_294_967_294;

/** The agent's own availability: AVAILABLE from the agent's start, at the first sequence number. */
export function agentAvailability(model: DeviceModel, startedAt: number): Served {
  return { def: model.agentAvailability, o: { machineID: '', item: 'avail', seq: 1, ts: startedAt, value: 'AVAILABLE' } };
}

/** The header as of the live state: next after the last committed row, first at the oldest row kept. */
export async function sequenceHeader(reader: GatewayReader, live: LiveState): Promise<SequenceHeader> {
  const firstRow = await reader.firstRowSeq();
  // Taken after the read: a caller that writes /current at once writes the state this number is next after.
  const nextSequence = observationSeq(live.through + 1, 0);
  const firstSequence = firstRow !== undefined && firstRow <= live.through ? observationSeq(firstRow, 0) : nextSequence;
  return { firstSequence, lastSequence: nextSequence - 1, nextSequence, bufferSize: Math.max(1, Math.min(MAX_BUFFER_SIZE, nextSequence - firstSequence)) };
}

/** A replay's last observation of each data item, kept when `wanted` selects it. */
export function lastObservations(model: DeviceModel, replay: MachineReplay, wanted: (def: DataItemDef) => boolean, into: Served[]): void {
  const items = model.byMachine.get(replay.machineID);
  if (!items) return;
  for (const item of VALUE_ITEMS) {
    const def = items[item];
    const o = replay.last[item];
    if (def && o && wanted(def)) into.push({ def, o });
  }
  for (const [item, o] of replay.motion.last) {
    const def = items[item];
    if (def && wanted(def)) into.push({ def, o });
  }
  const system = items.system;
  if (system && wanted(system)) for (const o of replay.conditionNow()) into.push({ def: system, o });
}

/** /current now: the live state's last observations. */
export function currentNow(model: DeviceModel, live: LiveState, filter: Set<string> | undefined, agent: Served): Served[] {
  const wanted = (def: DataItemDef) => !filter || filter.has(def.id);
  const out: Served[] = wanted(agent.def) ? [agent] : [];
  for (const machineID of model.byMachine.keys()) lastObservations(model, live.replay(machineID), wanted, out);
  return out;
}

/** /current?at=: the last observations with a sequence number at or below `at`. */
export async function currentAt(reader: GatewayReader, model: DeviceModel, header: SequenceHeader, at: number, filter: Set<string> | undefined, agent: Served): Promise<Served[]> {
  if (at < header.firstSequence || at > header.lastSequence) throw outOfRange('at', at, header.firstSequence, header.lastSequence);
  const row = rowOfSeq(at);
  const machineIDs = machinesOf(model, filter);
  // The rows before the one `at` is in, then that row's observations up to `at`.
  const replays = await lastObservationsAt(reader, machineIDs, row);
  const [atRow] = await reader.rowsAfter(row - 1, row, 1);
  if (atRow?.seq === row) replays.get(atRow.machineID)?.apply(parseRow(atRow), () => undefined, at);
  const wanted = (def: DataItemDef) => !filter || filter.has(def.id);
  const out: Served[] = wanted(agent.def) && agent.o.seq <= at ? [agent] : [];
  for (const replay of replays.values()) lastObservations(model, replay, wanted, out);
  return out;
}

/** The machines whose data items `filter` selects (every machine of the model without one). */
function machinesOf(model: DeviceModel, filter: Set<string> | undefined): string[] {
  if (!filter) return [...model.byMachine.keys()];
  const ids = new Set<string>();
  for (const id of filter) {
    const def = model.dataItems.get(id);
    if (def && 'machineID' in def.source) ids.add(def.source.machineID);
  }
  return [...ids];
}

export interface SampleRequest {
  from?: number | undefined;
  to?: number | undefined;
  count: number;
  filter?: Set<string> | undefined;
}

/** Checks from, to and count against the header as cppagent does; OUT_OF_RANGE naming the parameter otherwise. */
export function checkSampleRange(header: SequenceHeader, request: SampleRequest): void {
  const { from, to, count } = request;
  if (from !== undefined && (from < header.firstSequence || from > header.nextSequence)) throw outOfRange('from', from, header.firstSequence, header.nextSequence);
  if (to !== undefined) {
    const lower = (from ?? header.firstSequence) + 1;
    if (to < lower || to > header.nextSequence) throw outOfRange('to', to, lower, header.nextSequence);
    if (count < 1 || count > MAX_COUNT) throw outOfRange('count', count, 1, MAX_COUNT);
  }
  if (count === 0) throw new AgentError('OutOfRange', "'count' must not be zero(0)", { name: 'count', value: '0', minimum: -MAX_COUNT, maximum: MAX_COUNT });
  if (count < -MAX_COUNT || count > MAX_COUNT) throw outOfRange('count', count, -MAX_COUNT, MAX_COUNT);
}

/** /sample: see the module comment; the answer's header has the nextSequence (and, with `to`, the firstSequence) cppagent gives. */
/** `checkpoints`, when given, keeps where a forward page left off and goes on from it (replay-checkpoints.ts). */
export async function sample(reader: GatewayReader, model: DeviceModel, header: SequenceHeader, request: SampleRequest, through: number, checkpoints?: ReplayCheckpoints): Promise<StreamAnswer> {
  checkSampleRange(header, request);
  const { count, filter } = request;
  if (count > 0 && request.to === undefined) {
    const start = request.from ?? header.firstSequence;
    const filterKey = checkpoints ? filterKeyOf(filter) : '';
    const resume = checkpoints?.take(model, filterKey, start);
    const found = await scan(reader, model, filter, start, through, count, 'first', Number.MAX_SAFE_INTEGER, resume);
    const nextSequence = found.complete ? observationSeq(found.lastRow + 1, 0) : found.observations[found.observations.length - 1]!.o.seq + 1;
    if (checkpoints && found.replays) checkpoints.put({ model, filterKey, next: nextSequence, afterRow: found.lastRow, replays: found.replays, rest: found.rest });
    return { header: { ...header, nextSequence }, observations: found.observations };
  }
  // The last |count| observations at or before `to` (or `from` when count is negative): scanned forward over at most MAX_SCAN_ROWS rows.
  const end = request.to ?? request.from ?? header.lastSequence;
  const limit = Math.abs(count);
  const lower = request.to !== undefined ? (request.from ?? header.firstSequence) : header.firstSequence;
  const windowStart = Math.max(lower, observationSeq(rowOfSeq(end) - MAX_SCAN_ROWS + 1, 0));
  const found = await scan(reader, model, filter, windowStart, Math.min(through, rowOfSeq(end)), limit, 'last', end);
  if (request.to !== undefined) {
    const firstSequence = request.from !== undefined && request.from > header.firstSequence ? request.from : header.firstSequence;
    return { header: { ...header, firstSequence, nextSequence: Math.min(request.to + 1, header.nextSequence) }, observations: found.observations };
  }
  const earliest = found.observations[0]?.o.seq;
  const nextSequence = found.observations.length === limit && earliest !== undefined ? earliest - 1 : windowStart - 1;
  return { header: { ...header, nextSequence: Math.max(1, nextSequence) }, observations: found.observations };
}

interface ScanResult {
  observations: Served[];
  /** Whether the scan read every row it could (else it stopped at `limit` observations). */
  complete: boolean;
  /** The last row read. */
  lastRow: number;
  /** The replays as of `lastRow` (undefined when no row was read), and that row's observations left out at `limit`. */
  replays: Map<string, MachineReplay> | undefined;
  rest: Served[];
}

/**
 * Replays rows from the row of `start` through `throughRow` and keeps the
 * observations at or after `start` (and at or before `end`) that `filter`
 * selects: the first `limit` of them, or the last `limit`. With `resume`
 * (a checkpoint left where `start` is), its left-out observations come
 * first and the rows after its last row are replayed by its replays.
 */
async function scan(reader: GatewayReader, model: DeviceModel, filter: Set<string> | undefined, start: number, throughRow: number, limit: number, keep: 'first' | 'last', end = Number.MAX_SAFE_INTEGER, resume?: Checkpoint): Promise<ScanResult> {
  const startRow = resume ? resume.afterRow + 1 : rowOfSeq(start);
  const machines = filter ? machinesOf(model, filter) : undefined;
  const out: Served[] = [];
  let replays: Map<string, MachineReplay> | undefined = resume?.replays;
  let ts = 0;
  let after = startRow - 1;
  if (resume) {
    for (let i = 0; i < resume.rest.length; i++) {
      out.push(resume.rest[i]!);
      if (keep === 'first' && out.length === limit) return { observations: out, complete: false, lastRow: resume.afterRow, replays, rest: resume.rest.slice(i + 1) };
    }
  }
  const bound = Math.min(throughRow, startRow - 1 + MAX_SCAN_ROWS);
  while (after < bound && (machines === undefined || machines.length > 0)) {
    // Parsed one at a time as they are applied: a page that fills up mid-batch parses no row after it.
    const rows = await reader.rowsAfter(after, bound, BATCH_ROWS, machines);
    if (rows.length === 0) break;
    ts ||= rows[0]!.ts;
    const unknown = [...new Set(rows.map((r) => r.machineID))].filter((id) => model.byMachine.has(id) && !replays?.has(id));
    if (unknown.length) {
      const alarmy = new Set(rows.filter((r) => r.cls === 'State' || r.cls === 'AlarmLog').map((r) => r.machineID));
      const rebuilt = await replaysAt(reader, unknown, startRow, ts, (id) => alarmy.has(id));
      replays ??= new Map();
      for (const [id, replay] of rebuilt) replays.set(id, replay);
    }
    for (const row of rows) {
      after = row.seq;
      const replay = replays?.get(row.machineID);
      if (!replay) continue;
      const items = model.byMachine.get(row.machineID)!;
      const emitted: Served[] = [];
      replay.apply(parseRow(row), (o) => {
        const def = items[o.item];
        if (def && o.seq >= start && o.seq <= end && (!filter || filter.has(def.id))) emitted.push({ def, o });
      });
      emitted.sort((a, b) => a.o.seq - b.o.seq);
      for (let i = 0; i < emitted.length; i++) {
        out.push(emitted[i]!);
        if (keep === 'first' && out.length === limit) return { observations: out, complete: false, lastRow: row.seq, replays, rest: emitted.slice(i + 1) };
        if (keep === 'last' && out.length > limit) out.shift();
      }
    }
    if (rows.length < BATCH_ROWS) break;
  }
  return { observations: out, complete: true, lastRow: Math.max(after, bound), replays: replays ?? (resume ? new Map() : undefined), rest: [] };
}
