/**
 * A recorded machine played back: an SHDR log (recordings/lathe.shdr), each
 * entry sent at its recorded offset with the current time as its timestamp,
 * over and over. Counters keep rising from one round to the next (PART_COUNT
 * and EQUIPMENT_TIMER values grow by what one round added), so a gateway sees
 * parts made and hours run, not a counter reset every two minutes. Both
 * MTConnect simulators play the same recording: the adapter sends its lines,
 * the agent stand-in turns them into observations.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../core/runtime/package-root.js';
import { DataItemIndex, type DeviceModel } from './device-model.js';
import { parseDevices, pickDevice } from './probe.js';
import { tokenize } from './shdr-tokenizer.js';

/** The recorded lathe: its SHDR log and its Devices file (in the sources, found from dist/ too). */
export const LATHE_RECORDING = join(PACKAGE_ROOT, 'drivers', 'mtconnect', 'recordings', 'lathe.shdr');
export const LATHE_DEVICES = join(PACKAGE_ROOT, 'drivers', 'mtconnect', 'recordings', 'lathe.devices.xml');

/** One entry: a line, or a multiline asset's lines, at its offset into the round. */
export interface RecordedEntry {
  atMs: number;
  /** The fields after the timestamp (a multiline asset's head), and a multiline body with its end marker. */
  fields: string;
  body?: string;
}

export interface Recording {
  entries: RecordedEntry[];
  /** Length of one round: the last entry's offset plus a pause before the next round. */
  roundMs: number;
}

/** The pause after a round's last entry before the next round starts. */
const ROUND_PAUSE_MS = 5_000;

/** Reads an SHDR log: `#` lines are comments; every other line starts with its timestamp. */
export function parseRecording(text: string): Recording {
  const entries: RecordedEntry[] = [];
  const lines = text.split('\n').map((l) => l.trimEnd());
  let start: number | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line === '' || line.startsWith('#')) continue;
    const pipe = line.indexOf('|');
    const time = Date.parse(line.slice(0, pipe));
    if (pipe < 0 || !Number.isFinite(time)) throw new Error(`recording line ${i + 1} does not start with a timestamp`);
    start ??= time;
    const fields = line.slice(pipe + 1);
    const marker = fields.indexOf('--multiline--');
    if (marker < 0) {
      entries.push({ atMs: time - start, fields });
      continue;
    }
    const terminator = fields.slice(marker);
    const end = lines.indexOf(terminator, i + 1);
    if (end < 0) throw new Error(`recording line ${i + 1}: multiline asset without its end '${terminator}'`);
    entries.push({ atMs: time - start, fields, body: lines.slice(i + 1, end + 1).join('\n') });
    i = end;
  }
  const last = entries[entries.length - 1];
  return { entries, roundMs: (last?.atMs ?? 0) + ROUND_PAUSE_MS };
}

/** The recorded lathe's device model and recording. */
export function loadLathe(): { model: DeviceModel; recording: Recording } {
  const model = pickDevice(parseDevices(readFileSync(LATHE_DEVICES, 'utf8')), undefined, 'lathe.devices.xml');
  return { model, recording: parseRecording(readFileSync(LATHE_RECORDING, 'utf8')) };
}

/** How much each counter (by SHDR name) rises over one round: its last recorded value minus its first. */
function counterSteps(recording: Recording, model: DeviceModel): Map<string, number> {
  const index = new DataItemIndex(model);
  const first = new Map<string, number>();
  const last = new Map<string, number>();
  for (const entry of recording.entries) {
    if (entry.body !== undefined) continue;
    const tokens = tokenize(entry.fields) ?? [];
    for (let i = 0; i + 1 < tokens.length; i += 2) {
      const item = index.find(tokens[i] as string);
      const counter = item && ((item.type === 'PART_COUNT' && item.subType !== 'TARGET') || item.type === 'EQUIPMENT_TIMER');
      const value = Number(tokens[i + 1]);
      if (!counter || !Number.isFinite(value)) continue;
      if (!first.has(tokens[i] as string)) first.set(tokens[i] as string, value);
      last.set(tokens[i] as string, value);
    }
  }
  return new Map([...last].map(([name, value]) => [name, value - (first.get(name) ?? value)]));
}

export interface ReplayOptions {
  /** Where in the round to start, ms (machines of one simulator start apart). */
  startMs: number;
  /** Recorded seconds per real second. */
  timeScale: number;
  now: () => number;
  /** Each entry as SHDR text (one line, or a multiline asset's lines), stamped with the current time, without the last newline. */
  emit(text: string): void;
}

/** Plays a recording in rounds until stopped. */
export class Replay {
  private readonly steps: Map<string, number>;
  private round = 0;
  private position = 0;
  private roundStartedAt: number;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly recording: Recording,
    model: DeviceModel,
    private readonly options: ReplayOptions,
  ) {
    this.steps = counterSteps(recording, model);
    const offset = options.startMs % recording.roundMs;
    this.roundStartedAt = options.now() - offset / options.timeScale;
    while (this.position < recording.entries.length && (recording.entries[this.position] as RecordedEntry).atMs < offset) this.position++;
  }

  /** Starts sending the entries as they fall due. */
  start(): void {
    this.schedule();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The entries of this round so far, stamped now: what a client that connects now needs for the current state. */
  snapshot(): string[] {
    return this.recording.entries.slice(0, this.position).map((entry) => this.render(entry));
  }

  private schedule(): void {
    const entry = this.recording.entries[this.position];
    const dueAt = this.roundStartedAt + (entry ? entry.atMs : this.recording.roundMs) / this.options.timeScale;
    this.timer = setTimeout(() => this.tick(), Math.max(0, dueAt - this.options.now()));
  }

  private tick(): void {
    const now = this.options.now();
    for (;;) {
      const entry = this.recording.entries[this.position];
      if (!entry) {
        if (this.roundStartedAt + this.recording.roundMs / this.options.timeScale > now) break;
        this.round++;
        this.position = 0;
        this.roundStartedAt += this.recording.roundMs / this.options.timeScale;
        continue;
      }
      if (this.roundStartedAt + entry.atMs / this.options.timeScale > now) break;
      this.position++;
      this.options.emit(this.render(entry));
    }
    this.schedule();
  }

  /** An entry as SHDR text with the current time, its counters moved on by the rounds played. */
  private render(entry: RecordedEntry): string {
    const stamp = new Date(this.options.now()).toISOString();
    if (entry.body !== undefined) return `${stamp}|${entry.fields}\n${entry.body}`;
    if (this.round === 0) return `${stamp}|${entry.fields}`;
    const tokens = tokenize(entry.fields) ?? [];
    for (let i = 0; i + 1 < tokens.length; i += 2) {
      const step = this.steps.get(tokens[i] as string);
      const value = Number(tokens[i + 1]);
      if (step !== undefined && Number.isFinite(value)) tokens[i + 1] = String(Math.round((value + step * this.round) * 1000) / 1000);
    }
    return `${stamp}|${tokens.join('|')}`;
  }
}
