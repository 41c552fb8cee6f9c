/**
 * The tallies of one machine over a window, built from cells: the window is
 * cut at sub-window borders and at local midnights (the gateway's time zone),
 * each whole settled day is one cell kept in memory, and the rest is read
 * from history. A 30-day analysis therefore reads at most the two partial
 * days at its ends once the days between have been analysed. A kept day is
 * valid while the machine's history revision holds
 * (core/roles/gateway/history/revisions.ts): late rows and retention make it stale.
 * Joining cells gives exactly what one pass over the whole window gives
 * (test/plugins/analysis/cells.test.ts).
 */
import type { AlarmRecord, TimeSpan } from './compute/model.js';
import { analysedRange, emptyTally, tallyCells, tallySubWindows, type Cell, type Tally } from './compute/tally.js';
import type { HistoryRevisions } from '../../core/roles/gateway/history/revisions.js';
import { startOfLocalDay } from '../../core/values/time.js';
import type { HistoryNeeds, HistoryReader } from './history-reader.js';

/** More than the longest local day (25 h): from a midnight, this far on lies in the next day. */
const INTO_NEXT_DAY_MS = 26 * 3_600_000;

/** The first local midnight at or after `ms`. */
function midnightFrom(ms: number, timeZone: string): number {
  const start = startOfLocalDay(ms, timeZone);
  return start >= ms ? start : startOfLocalDay(start + INTO_NEXT_DAY_MS, timeZone);
}

/** Memory kept for day cells across the fleet, estimated; the least recently used go first. */
export const DEFAULT_CELL_CACHE_BYTES = 64 * 1024 * 1024;

const FULL: HistoryNeeds = { timeline: true, counts: true, alarms: true };

/** Rough bytes of one cell: the fixed part, cycle times (twice: overall and per program), programs and alarm pieces. */
function dayBytes({ cell, loggedOpen }: KeptDay): number {
  const t = cell.tally;
  return 600 + 16 * t.cycleTimes.length + 80 * t.countByProgram.size + 160 * (t.alarms.length + loggedOpen.length) + 48 * cell.gaps.length;
}

/** A day as kept: its cell, and its alarms logged that never ended (whether still active is decided per request). */
export interface KeptDay {
  cell: Cell;
  loggedOpen: readonly AlarmRecord[];
}

interface Kept {
  day: KeptDay;
  revision: number;
  bytes: number;
}

/** Day cells by machine, heartbeat setting and day, least recently used first. */
export class DayCellCache {
  private readonly entries = new Map<string, Kept>();
  private bytes = 0;
  hits = 0;
  misses = 0;

  constructor(private readonly maxBytes = DEFAULT_CELL_CACHE_BYTES) {}

  private static key(machineID: string, heartbeatSec: number, day: TimeSpan): string {
    return `${machineID}\u0000${heartbeatSec}\u0000${day.startMs}\u0000${day.endMs}`;
  }

  get(machineID: string, heartbeatSec: number, day: TimeSpan, revision: number): KeptDay | undefined {
    const key = DayCellCache.key(machineID, heartbeatSec, day);
    const kept = this.entries.get(key);
    if (!kept || kept.revision !== revision) {
      if (kept) this.drop(key, kept);
      this.misses++;
      return undefined;
    }
    this.entries.delete(key);
    this.entries.set(key, kept);
    this.hits++;
    return kept.day;
  }

  set(machineID: string, heartbeatSec: number, span: TimeSpan, revision: number, day: KeptDay): void {
    const key = DayCellCache.key(machineID, heartbeatSec, span);
    const old = this.entries.get(key);
    if (old) this.drop(key, old);
    const bytes = dayBytes(day);
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { day, revision, bytes });
    this.bytes += bytes;
    for (const [k, v] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.drop(k, v);
    }
  }

  private drop(key: string, kept: Kept): void {
    this.entries.delete(key);
    this.bytes -= kept.bytes;
  }

  get size(): number {
    return this.entries.size;
  }

  get estimatedBytes(): number {
    return this.bytes;
  }
}

/** One stretch of the analysed range inside one sub-window; `day` marks a whole settled local day. */
interface Piece {
  span: TimeSpan;
  day: boolean;
  cell?: Cell;
  loggedOpen?: readonly AlarmRecord[];
}

const occurrence = (a: AlarmRecord) => `${a.code}\u0000${a.message}\u0000${a.startMs}`;

/** The live alarms, and the logged ones with activeNow set when the live status still shows them. */
function markActive(logged: readonly AlarmRecord[], live: readonly AlarmRecord[]): AlarmRecord[] {
  const active = new Set(live.map(occurrence));
  return [...live, ...logged.map((a) => (active.has(occurrence(a)) ? { ...a, activeNow: true } : a))];
}

/** `t` with the parts, or the alarms, removed when they were not asked for. */
function withOnly(t: Tally, needs: HistoryNeeds): Tally {
  if (needs.counts && needs.alarms) return t;
  const out = { ...t };
  if (!needs.alarms) out.alarms = [];
  if (!needs.counts) {
    const none = emptyTally();
    Object.assign(out, {
      totalCount: 0,
      countRows: 0,
      countByProgram: none.countByProgram,
      cycleTimes: none.cycleTimes,
      cycleTimesByProgram: none.cycleTimesByProgram,
      idealProductionMs: 0,
    });
  }
  return out;
}

export interface MachineTallyRequest {
  machineID: string;
  subWindows: readonly TimeSpan[];
  nowMs: number;
  heartbeatSec: number;
  needs: HistoryNeeds;
  /** Alarms the machine's live status shows now. */
  liveAlarms: readonly AlarmRecord[];
  /** The gateway's time zone, whose midnights bound the kept days. */
  timeZone: string;
  idealCycleTimeSec: number | null;
}

export class MachineTallies {
  constructor(
    private readonly reader: HistoryReader,
    private readonly revisions: HistoryRevisions,
    readonly cache: DayCellCache = new DayCellCache(),
  ) {}

  /** The pieces of the analysed range: whole settled local days that lie inside one sub-window, and the stretches between. */
  private pieces(subWindows: readonly TimeSpan[], range: TimeSpan, settledBefore: number, timeZone: string): Piece[] {
    const pieces: Piece[] = [];
    for (const w of subWindows) {
      let t = Math.max(w.startMs, range.startMs);
      const end = Math.min(w.endMs, range.endMs);
      if (t >= end) continue;
      const limit = Math.min(end, settledBefore);
      for (let day = midnightFrom(t, timeZone); day < limit; ) {
        const next = midnightFrom(day + 1, timeZone);
        if (next > limit) break;
        if (day > t) pieces.push({ span: { startMs: t, endMs: day }, day: false });
        pieces.push({ span: { startMs: day, endMs: next }, day: true });
        t = day = next;
      }
      if (t < end) pieces.push({ span: { startMs: t, endMs: end }, day: false });
    }
    return pieces;
  }

  /** One tally per sub-window. */
  async tallies(req: MachineTallyRequest): Promise<Tally[]> {
    const { machineID, subWindows, nowMs, heartbeatSec } = req;
    const range = analysedRange(subWindows, nowMs);
    if (range.endMs <= range.startMs) return subWindows.map(() => emptyTally());
    // Read before any history: a revision that moves while this runs makes what was read unfit to keep.
    const revision = this.revisions.of(machineID);
    const pieces = this.pieces(subWindows, range, this.revisions.settledBefore(nowMs), req.timeZone);
    for (const p of pieces) {
      const kept = p.day ? this.cache.get(machineID, heartbeatSec, p.span, revision) : undefined;
      if (kept) Object.assign(p, kept);
    }

    // Consecutive pieces not kept are read as one stretch of history.
    for (let i = 0; i < pieces.length; ) {
      if (pieces[i]!.cell) {
        i++;
        continue;
      }
      let j = i;
      while (j < pieces.length && !pieces[j]!.cell) j++;
      const run = pieces.slice(i, j);
      const runSpan = { startMs: run[0]!.span.startMs, endMs: run[run.length - 1]!.span.endMs };
      const keep = run.some((p) => p.day);
      const needs = keep ? FULL : req.needs;
      const history = await this.reader.machineHistory(machineID, runSpan, needs);
      const loggedOpen = needs.alarms ? await this.reader.loggedOpenAlarms(machineID, runSpan) : [];
      const cells = tallyCells(
        history,
        run.map((p) => p.span),
        nowMs,
        heartbeatSec,
      );
      run.forEach((p, k) => {
        p.cell = cells[k]!;
        p.loggedOpen = loggedOpen.filter((a) => a.loggedMs >= p.span.startMs && a.loggedMs < p.span.endMs);
      });
      if (keep && this.revisions.of(machineID) === revision) {
        for (const p of run) if (p.day) this.cache.set(machineID, heartbeatSec, p.span, revision, { cell: p.cell!, loggedOpen: p.loggedOpen! });
      }
      i = j;
    }

    const open = req.needs.alarms ? markActive(pieces.flatMap((p) => p.loggedOpen ?? []), await this.reader.liveNotEnded(machineID, req.liveAlarms)) : [];
    const tallies = tallySubWindows(
      subWindows,
      pieces.map((p) => p.cell!),
      open,
      range,
      req.idealCycleTimeSec,
    );
    // Kept days hold everything; what was not asked for is dropped, so the answer does not depend on what is kept.
    return tallies.map((t) => withOnly(t, req.needs));
  }
}
