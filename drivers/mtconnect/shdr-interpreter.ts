/**
 * What an adapter's SHDR lines say, line by line, as the reference agent
 * reads them (cppagent's ShdrAdapter, ShdrTokenizer, ShdrTokenMapper):
 *
 *   timestamp|key|value|key|value…            events and samples
 *   timestamp|key|level|nativeCode|nativeSeverity|qualifier|message   a condition
 *   timestamp|key|nativeCode|text             a MESSAGE
 *   timestamp|@ASSET@|id|type|<xml…>          an asset (`--multiline--TAG` spreads it over lines up to TAG)
 *   timestamp|@REMOVE_ASSET@|id, timestamp|@REMOVE_ALL_ASSETS@|type
 *   * command: value                          protocol commands (`* shdrVersion: 2`)
 *
 * A key is a data item's name, id or source, optionally `device:key`. With
 * SHDR version 1 (the default) an item of several fields ends the line, and
 * an unknown key is skipped with the one value after it. Each problem is
 * told to the sink and the rest of the line goes on; what breaks the stream
 * itself (an asset that never ends) throws ShdrBreak.
 */
import type { DataItem, DataItemIndex } from './device-model.js';
import { parseAssets, type ParsedAsset } from './assets.js';
import type { ConditionReport } from './observations.js';
import { ShdrClock } from './shdr-timestamp.js';
import { tokenize } from './shdr-tokenizer.js';
import { CONDITION_LEVELS, type ConditionLevel } from './streams.js';
import { XmlProblem, type XmlLimits } from './xml-reader.js';

/** Kinds of bad input a line can carry; the stream goes on. */
export type ShdrProblemKind = 'tooManyFields' | 'unknownDataItem' | 'futureTimestamp' | 'notShdr' | 'badValue' | 'badAsset';

export interface ShdrSink {
  value(item: DataItem, value: string, timestamp: number): void;
  condition(item: DataItem, report: ConditionReport, timestamp: number): void;
  /** An asset, and its XML as the line carried it. */
  asset(asset: ParsedAsset, xml: string): void;
  removeAsset(assetId: string): void;
  removeAllAssets(type: string | undefined): void;
  /** A protocol command other than PONG, e.g. `shdrVersion`, `device`, `message`. */
  command(name: string, value: string): void;
  problem(kind: ShdrProblemKind, detail: string, key?: string): void;
}

export interface ShdrInterpreterSettings {
  index: DataItemIndex;
  /** The device name or uuid that `device:key` prefixes must name; other devices' keys are ignored. */
  deviceNames: readonly string[];
  maxFieldsPerLine: number;
  /** Longest asset, in characters, over its lines. */
  maxAssetChars: number;
  /** A timestamp further ahead of the gateway's clock than this is replaced by the arrival time. */
  maxClockAheadMs: number;
  assetLimits: XmlLimits;
}

/** Input that breaks the stream itself; the connection is dropped with this reason. */
export class ShdrBreak extends Error {}

const UNAVAILABLE_WORD = 'UNAVAILABLE';
const MULTILINE = '--multiline--';
const show = (text: string, max = 64): string => (text.length > max ? `${text.slice(0, max)}…` : text);

export class ShdrInterpreter {
  private readonly clock = new ShdrClock();
  private shdrVersion = 1;
  private multiline: { head: string; terminator: string; lines: string[]; chars: number } | undefined;

  constructor(
    private readonly settings: ShdrInterpreterSettings,
    private readonly sink: ShdrSink,
  ) {}

  /** One line, without its end of line, right-trimmed and not blank; returns false when it was not SHDR. */
  feed(line: string, receivedAt: number): boolean {
    if (this.multiline) return this.continueMultiline(line, receivedAt);
    if (line.startsWith('*')) {
      this.command(line);
      return true;
    }
    const marker = line.indexOf(MULTILINE);
    if (marker >= 0) {
      this.multiline = { head: line.slice(0, marker), terminator: line.slice(marker), lines: [], chars: 0 };
      return true;
    }
    return this.line(line, undefined, receivedAt);
  }

  private continueMultiline(line: string, receivedAt: number): boolean {
    const m = this.multiline!;
    if (line === m.terminator) {
      this.multiline = undefined;
      return this.line(m.head, m.lines.join('\n'), receivedAt);
    }
    m.chars += line.length + 1;
    if (m.chars > this.settings.maxAssetChars) {
      this.multiline = undefined;
      throw new ShdrBreak(`a multiline asset ran over ${this.settings.maxAssetChars} characters without its end '${show(m.terminator)}' (driverOptions.maxAssetBytes)`);
    }
    m.lines.push(line);
    return true;
  }

  private command(line: string): void {
    const match = /^\*\s*([^:]+?)\s*:\s*(.*)$/.exec(line);
    if (!match) return;
    const name = (match[1] as string).toLowerCase();
    const value = (match[2] as string).trim();
    if (name === 'shdrversion') this.shdrVersion = Number.parseInt(value, 10) >= 2 ? 2 : 1;
    this.sink.command(name, value);
  }

  /** A line's fields; `body` is a multiline asset's text, which follows the line's last field. */
  private line(line: string, body: string | undefined, receivedAt: number): boolean {
    const tokens = tokenize(line, this.settings.maxFieldsPerLine);
    if (!tokens) {
      this.sink.problem('tooManyFields', `a line with more than ${this.settings.maxFieldsPerLine} fields was skipped (driverOptions.maxFieldsPerLine): '${show(line)}'`);
      return true;
    }
    const time = this.timestamp(tokens[0] ?? '', receivedAt, line);
    if (time === undefined) return false;
    let i = 1;
    while (i < tokens.length) {
      const key = tokens[i] as string;
      if (key.startsWith('@')) {
        this.assetCommand(tokens, i, line, body, time);
        return true;
      }
      const used = this.item(tokens, i, time);
      i += used;
      if (this.shdrVersion < 2 && used > 2) return true;
    }
    return true;
  }

  private timestamp(field: string, receivedAt: number, line: string): number | undefined {
    const read = this.clock.read(field, receivedAt);
    if (read.kind === 'invalid') {
      this.sink.problem('notShdr', `a line whose first field '${show(field, 40)}' is no timestamp was skipped: '${show(line)}'`);
      return undefined;
    }
    if (read.kind === 'none') return receivedAt;
    if (read.ms - receivedAt > this.settings.maxClockAheadMs) {
      const ahead = Math.round((read.ms - receivedAt) / 1000);
      this.sink.problem('futureTimestamp', `timestamp '${show(field, 40)}' is ${ahead} s ahead of the gateway's clock (more than driverOptions.maxClockAheadMs); the time it arrived is used`);
      return receivedAt;
    }
    return read.ms;
  }

  /** The data item of `key`, or undefined for an unknown key or another device's. */
  private resolve(key: string): DataItem | undefined {
    const colon = key.indexOf(':');
    if (colon > 0) {
      const device = key.slice(0, colon);
      if (!this.settings.deviceNames.includes(device)) return undefined;
      return this.settings.index.find(key.slice(colon + 1));
    }
    return this.settings.index.find(key);
  }

  /** Handles the item at `tokens[i]`; returns how many fields it took (key included). */
  private item(tokens: readonly string[], i: number, time: number): number {
    const key = tokens[i] as string;
    const item = this.resolve(key);
    if (!item) {
      const colon = key.indexOf(':');
      if (colon <= 0 || this.settings.deviceNames.includes(key.slice(0, colon))) {
        this.sink.problem('unknownDataItem', `data item '${show(key, 40)}' is not in the device's model (probe, devicesFile or dataItems) and is ignored`, key);
      }
      return 2;
    }
    const field = (n: number): string => tokens[i + n] ?? '';
    if (item.category === 'CONDITION') {
      this.conditionItem(item, field(1), { nativeCode: field(2), nativeSeverity: field(3), qualifier: field(4), message: field(5) }, time);
      return 6;
    }
    if (item.type === 'MESSAGE') {
      this.sink.value(item, field(2), time);
      return 3;
    }
    if (item.type === 'ALARM') {
      this.sink.value(item, field(5), time);
      return 6;
    }
    if (item.representation === 'TIME_SERIES') {
      this.sink.value(item, field(3), time);
      return 4;
    }
    const raw = field(1);
    this.sink.value(item, raw.toUpperCase() === UNAVAILABLE_WORD ? UNAVAILABLE_WORD : raw, time);
    return 2;
  }

  private conditionItem(item: DataItem, levelField: string, fields: Record<'nativeCode' | 'nativeSeverity' | 'qualifier' | 'message', string>, time: number): void {
    const level = levelField.toUpperCase() as ConditionLevel;
    if (!CONDITION_LEVELS.includes(level)) {
      this.sink.problem('badValue', `condition '${show(item.name ?? item.id, 40)}' has level '${show(levelField, 40)}'; accepted: ${CONDITION_LEVELS.join(', ')}`);
      return;
    }
    const report: ConditionReport = { level };
    for (const [name, value] of Object.entries(fields)) if (value !== '') report[name as keyof typeof fields] = value;
    this.sink.condition(item, report, time);
  }

  private assetCommand(tokens: readonly string[], i: number, line: string, body: string | undefined, time: number): void {
    const command = tokens[i] as string;
    if (command === '@REMOVE_ASSET@') return this.sink.removeAsset(tokens[i + 1] ?? '');
    if (command === '@REMOVE_ALL_ASSETS@') return this.sink.removeAllAssets(tokens[i + 1] || undefined);
    if (command !== '@ASSET@') {
      this.sink.problem('badAsset', `asset command '${show(command, 40)}' is not one of @ASSET@, @REMOVE_ASSET@, @REMOVE_ALL_ASSETS@`);
      return;
    }
    const assetId = tokens[i + 1] ?? '';
    // A one-line asset's XML is the rest of the line after the type, pipes and all.
    const xml = body ?? line.split('|').slice(i + 3).join('|');
    if (!assetId) return this.sink.problem('badAsset', 'an @ASSET@ without an asset id was skipped');
    try {
      const parsed = parseAssets(xml, this.settings.assetLimits, assetId);
      const asset = parsed.kind === 'assets' ? parsed.assets[0] : undefined;
      if (!asset) throw new XmlProblem('no asset element');
      this.sink.asset({ ...asset, timestamp: asset.timestamp ?? time }, xml);
    } catch (error) {
      if (!(error instanceof XmlProblem)) throw error;
      this.sink.problem('badAsset', `asset '${show(assetId, 40)}' was skipped: ${error.message}`);
    }
  }
}
