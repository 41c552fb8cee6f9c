/**
 * What SHDR lines say, read as the reference agent reads them: timestamps,
 * conditions, messages, assets (one line and --multiline--), protocol
 * commands, device prefixes, and bad input skipped with its reason while the
 * rest of the line and the stream go on.
 */
import { describe, expect, it } from 'vitest';
import type { ParsedAsset } from '../../../drivers/mtconnect/assets.js';
import { DataItemIndex } from '../../../drivers/mtconnect/device-model.js';
import type { ConditionReport } from '../../../drivers/mtconnect/observations.js';
import { loadLathe } from '../../../drivers/mtconnect/replay.js';
import { ShdrBreak, ShdrInterpreter, type ShdrProblemKind } from '../../../drivers/mtconnect/shdr-interpreter.js';

const NOW = Date.UTC(2026, 0, 5, 8, 0, 0);
const { model } = loadLathe();

interface Heard {
  values: Array<[string, string, number]>;
  conditions: Array<[string, ConditionReport, number]>;
  assets: Array<[ParsedAsset, string]>;
  removed: string[];
  removedAll: Array<string | undefined>;
  commands: Array<[string, string]>;
  problems: Array<[ShdrProblemKind, string]>;
}

function interpreter(settings: Partial<{ maxFieldsPerLine: number; maxAssetChars: number; maxClockAheadMs: number; deviceNames: string[] }> = {}) {
  const heard: Heard = { values: [], conditions: [], assets: [], removed: [], removedAll: [], commands: [], problems: [] };
  const shdr = new ShdrInterpreter(
    {
      index: new DataItemIndex(model),
      deviceNames: settings.deviceNames ?? ['lathe'],
      maxFieldsPerLine: settings.maxFieldsPerLine ?? 100,
      maxAssetChars: settings.maxAssetChars ?? 100_000,
      maxClockAheadMs: settings.maxClockAheadMs ?? 60_000,
      assetLimits: { maxChars: 100_000, maxDepth: 16, maxElements: 1_000, maxTextChars: 1_000 },
    },
    {
      value: (item, value, time) => heard.values.push([item.id, value, time]),
      condition: (item, report, time) => heard.conditions.push([item.id, report, time]),
      asset: (asset, xml) => heard.assets.push([asset, xml]),
      removeAsset: (id) => heard.removed.push(id),
      removeAllAssets: (type) => heard.removedAll.push(type),
      command: (name, value) => heard.commands.push([name, value]),
      problem: (kind, detail) => heard.problems.push([kind, detail]),
    },
  );
  return { shdr, heard };
}

const TOOL = '<CuttingTool toolId="T7" assetId="X"><CuttingToolLifeCycle><CutterStatus><Status>NEW</Status></CutterStatus><ToolLife type="MINUTES" countDirection="DOWN" limit="60">45</ToolLife><ProgramToolNumber>7</ProgramToolNumber></CuttingToolLifeCycle></CuttingTool>';

describe('SHDR interpreter', () => {
  it('reads key|value pairs with the line\'s timestamp: microseconds, UTC without a zone, @duration, and UNAVAILABLE in any case', () => {
    const { shdr, heard } = interpreter();
    expect(shdr.feed('2026-01-05T07:59:59.1234567Z|execution|ACTIVE|part_count|121', NOW)).toBe(true);
    shdr.feed('2026-01-05T07:59:58.5|mode|AUTOMATIC', NOW);
    shdr.feed('2026-01-05T07:59:57Z@2.5|Sspeed|unavailable', NOW);
    expect(heard.values).toEqual([
      ['execution', 'ACTIVE', NOW - 877],
      ['part_count', '121', NOW - 877],
      ['mode', 'AUTOMATIC', NOW - 1500],
      ['Sspeed', 'UNAVAILABLE', NOW - 3000],
    ]);
    expect(heard.problems).toEqual([]);
  });

  it('takes an empty timestamp as the time the line arrived, and plain numbers as times relative to the first one', () => {
    const { shdr, heard } = interpreter();
    shdr.feed('|execution|READY', NOW);
    shdr.feed('1000|mode|MANUAL', NOW + 5);
    shdr.feed('1250|mode|AUTOMATIC', NOW + 300);
    expect(heard.values.map(([, , t]) => t)).toEqual([NOW, NOW + 5, NOW + 255]);
  });

  it('reads a condition\'s level, native code, native severity, qualifier and message; with SHDR version 1 it ends the line', () => {
    const { shdr, heard } = interpreter();
    shdr.feed('2026-01-05T08:00:00Z|system|FAULT|2051|2|HIGH|Spindle overload|execution|STOPPED', NOW);
    shdr.feed('2026-01-05T08:00:00Z|logic|normal||||', NOW);
    expect(heard.conditions).toEqual([
      ['system', { level: 'FAULT', nativeCode: '2051', nativeSeverity: '2', qualifier: 'HIGH', message: 'Spindle overload' }, NOW],
      ['logic', { level: 'NORMAL' }, NOW],
    ]);
    expect(heard.values).toEqual([]);
  });

  it('with `* shdrVersion: 2` reads on after a condition in the same line', () => {
    const { shdr, heard } = interpreter();
    shdr.feed('* shdrVersion: 2', NOW);
    shdr.feed('2026-01-05T08:00:00Z|system|WARNING|17|||Low coolant|execution|ACTIVE', NOW);
    expect(heard.conditions.map(([id, r]) => [id, r.level])).toEqual([['system', 'WARNING']]);
    expect(heard.values).toEqual([['execution', 'ACTIVE', NOW]]);
    expect(heard.commands).toEqual([['shdrversion', '2']]);
  });

  it('skips an unknown data item with its value and reads the rest of the line', () => {
    const { shdr, heard } = interpreter();
    shdr.feed('2026-01-05T08:00:00Z|spindle_temp|41.5|execution|ACTIVE', NOW);
    expect(heard.values).toEqual([['execution', 'ACTIVE', NOW]]);
    expect(heard.problems).toEqual([['unknownDataItem', expect.stringContaining("data item 'spindle_temp' is not in the device's model")]]);
  });

  it('reads `device:key` for its own device and ignores other devices\' keys without calling them unknown', () => {
    const { shdr, heard } = interpreter({ deviceNames: ['lathe', 'cnc-gateway-recorded-lathe'] });
    shdr.feed('2026-01-05T08:00:00Z|lathe:execution|ACTIVE|mill:execution|READY|cnc-gateway-recorded-lathe:mode|AUTOMATIC', NOW);
    expect(heard.values.map(([id, v]) => [id, v])).toEqual([['execution', 'ACTIVE'], ['mode', 'AUTOMATIC']]);
    expect(heard.problems).toEqual([]);
  });

  it('skips a line with more fields than maxFieldsPerLine, saying so, and reads the next', () => {
    const { shdr, heard } = interpreter({ maxFieldsPerLine: 8 });
    expect(shdr.feed(`2026-01-05T08:00:00Z${'|execution|ACTIVE'.repeat(10)}`, NOW)).toBe(true);
    shdr.feed('2026-01-05T08:00:00Z|execution|READY', NOW);
    expect(heard.values).toEqual([['execution', 'READY', NOW]]);
    expect(heard.problems).toEqual([['tooManyFields', expect.stringContaining('more than 8 fields was skipped (driverOptions.maxFieldsPerLine)')]]);
  });

  it('uses the arrival time for a timestamp further ahead than maxClockAheadMs, and says how far ahead it was', () => {
    const { shdr, heard } = interpreter({ maxClockAheadMs: 60_000 });
    shdr.feed('2030-01-01T00:00:00Z|execution|ACTIVE', NOW);
    shdr.feed('2026-01-05T08:00:30Z|execution|READY', NOW);
    expect(heard.values).toEqual([['execution', 'ACTIVE', NOW], ['execution', 'READY', NOW + 30_000]]);
    expect(heard.problems).toEqual([['futureTimestamp', expect.stringMatching(/is \d+ s ahead of the gateway's clock/)]]);
  });

  it('says a line is not SHDR when its first field is no time, and a condition level that is not one is skipped', () => {
    const { shdr, heard } = interpreter();
    expect(shdr.feed('HTTP/1.1 400 Bad Request', NOW)).toBe(false);
    expect(shdr.feed('2026-01-05T08:00:00Z|system|BROKEN|1|||x', NOW)).toBe(true);
    expect(heard.problems.map(([kind]) => kind)).toEqual(['notShdr', 'badValue']);
    expect(heard.problems[1]?.[1]).toContain('accepted: NORMAL, WARNING, FAULT, UNAVAILABLE');
  });

  it('reads a MESSAGE\'s text after its native code', () => {
    const messageModel = { name: 'm', dataItems: [{ id: 'msg', name: 'message', type: 'MESSAGE', category: 'EVENT' as const, component: { type: 'Path' } }] };
    const heard: Array<[string, string]> = [];
    const shdr = new ShdrInterpreter(
      { index: new DataItemIndex(messageModel), deviceNames: [], maxFieldsPerLine: 100, maxAssetChars: 1000, maxClockAheadMs: 1000, assetLimits: { maxChars: 1000, maxDepth: 8, maxElements: 100, maxTextChars: 100 } },
      { value: (item, value) => heard.push([item.id, value]), condition: () => undefined, asset: () => undefined, removeAsset: () => undefined, removeAllAssets: () => undefined, command: () => undefined, problem: () => undefined },
    );
    shdr.feed('|message|M42|Door open', NOW);
    expect(heard).toEqual([['msg', 'Door open']]);
  });

  it('reads a one-line @ASSET@ with pipes in its XML, a --multiline-- one, and the asset removals', () => {
    const { shdr, heard } = interpreter();
    const withPipe = TOOL.replace('NEW', 'NEW|USED');
    shdr.feed(`2026-01-05T08:00:00Z|@ASSET@|T7|CuttingTool|${withPipe}`, NOW);
    shdr.feed('2026-01-05T08:00:01Z|@ASSET@|T8|CuttingTool|--multiline--ABC', NOW);
    for (const line of TOOL.replace('T7', 'T8').replace(/></g, '>\n<').split('\n')) shdr.feed(line, NOW);
    expect(heard.assets).toHaveLength(1);
    shdr.feed('--multiline--ABC', NOW);
    shdr.feed('2026-01-05T08:00:02Z|@REMOVE_ASSET@|T7', NOW);
    shdr.feed('2026-01-05T08:00:03Z|@REMOVE_ALL_ASSETS@|CuttingTool', NOW);
    expect(heard.assets.map(([a]) => [a.assetId, a.type, a.tool?.programToolNumber, a.timestamp])).toEqual([
      ['T7', 'CuttingTool', '7', NOW],
      ['T8', 'CuttingTool', '7', NOW + 1000],
    ]);
    expect(heard.assets[0]?.[1]).toContain('NEW|USED');
    expect(heard.removed).toEqual(['T7']);
    expect(heard.removedAll).toEqual(['CuttingTool']);
  });

  it('skips an asset whose XML does not parse, saying why', () => {
    const { shdr, heard } = interpreter();
    shdr.feed('2026-01-05T08:00:00Z|@ASSET@|T9|CuttingTool|<CuttingTool><unclosed>', NOW);
    expect(heard.assets).toEqual([]);
    expect(heard.problems).toEqual([['badAsset', expect.stringContaining("asset 'T9' was skipped: not well-formed XML")]]);
  });

  it('breaks the stream when a multiline asset runs over maxAssetBytes without its end', () => {
    const { shdr } = interpreter({ maxAssetChars: 1_000 });
    shdr.feed('2026-01-05T08:00:00Z|@ASSET@|T9|CuttingTool|--multiline--END', NOW);
    expect(() => {
      for (let i = 0; i < 100; i++) shdr.feed(`<x>${'y'.repeat(50)}</x>`, NOW);
    }).toThrow(ShdrBreak);
  });
});
