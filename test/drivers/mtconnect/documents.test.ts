/**
 * The agent documents the driver reads (Devices, Streams, Error, Assets),
 * the bounds on reading them, the roles found in a probe, and tool life from
 * CuttingTool assets.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parseAssets, toolLifeOf, type ParsedAsset } from '../../../drivers/mtconnect/assets.js';
import { parseDevices, pickDevice } from '../../../drivers/mtconnect/probe.js';
import { LATHE_DEVICES } from '../../../drivers/mtconnect/replay.js';
import { rolesOf } from '../../../drivers/mtconnect/roles.js';
import { parseStreams } from '../../../drivers/mtconnect/streams.js';
import { readXml, XmlProblem } from '../../../drivers/mtconnect/xml-reader.js';

const STREAMS = `<?xml version="1.0" encoding="UTF-8"?>
<MTConnectStreams xmlns:m="urn:mtconnect.org:MTConnectStreams:2.7" xmlns="urn:mtconnect.org:MTConnectStreams:2.7">
  <Header creationTime="2026-01-05T08:00:00Z" sender="a" instanceId="1700000000" version="2.7.0.0" bufferSize="131072" nextSequence="45" firstSequence="1" lastSequence="44" deviceModelChangeTime="2026-01-05T08:00:00Z"/>
  <Streams>
    <DeviceStream name="lathe" uuid="u1">
      <ComponentStream component="Path" componentId="path" name="path">
        <Events>
          <Execution dataItemId="execution" timestamp="2026-01-05T08:00:00.123456Z" sequence="40" name="execution">FEED_HOLD</Execution>
          <PartCount dataItemId="part_count" timestamp="2026-01-05T08:00:00.000000Z" sequence="41" subType="ALL">121</PartCount>
          <AssetChanged dataItemId="asset_chg" timestamp="2026-01-05T08:00:00Z" sequence="42" assetType="CuttingTool">T1</AssetChanged>
        </Events>
        <Condition>
          <Fault dataItemId="system" timestamp="2026-01-05T08:00:01Z" sequence="43" type="SYSTEM" nativeCode="2051" nativeSeverity="2" qualifier="HIGH">Spindle &amp; overload</Fault>
          <Normal dataItemId="logic" timestamp="2026-01-05T08:00:01Z" sequence="44" type="LOGIC_PROGRAM"/>
        </Condition>
      </ComponentStream>
    </DeviceStream>
  </Streams>
</MTConnectStreams>`;

const TOOL = (life: string, extra = '') =>
  `<CuttingTool toolId="12" assetId="T12" timestamp="2026-01-05T08:00:00Z"${extra}><CuttingToolLifeCycle><CutterStatus><Status>USED</Status></CutterStatus>${life}<ProgramToolGroup>3</ProgramToolGroup><ProgramToolNumber>5</ProgramToolNumber></CuttingToolLifeCycle></CuttingTool>`;

describe('MTConnect documents', () => {
  it('reads a probe: every data item with its type, subType, category and component; the Agent device is left out', () => {
    const doc = parseDevices(readFileSync(LATHE_DEVICES, 'utf8'));
    expect(doc.instanceId).toBe(1);
    const lathe = pickDevice(doc, undefined, 'the file');
    expect(lathe).toMatchObject({ name: 'lathe', uuid: 'cnc-gateway-recorded-lathe' });
    expect(lathe.dataItems.find((d) => d.id === 'Xload')).toEqual({ id: 'Xload', name: 'Xload', type: 'LOAD', category: 'SAMPLE', units: 'PERCENT', component: { type: 'Linear', id: 'x', name: 'X' } });
    expect(lathe.dataItems.find((d) => d.id === 'avail')?.component).toEqual({ type: 'Device', id: 'lathe', name: 'lathe' });
    const withAgent = parseDevices(
      '<MTConnectDevices><Header instanceId="3"/><Devices><Agent id="agent" name="Agent" uuid="a"><DataItems><DataItem id="ag_avail" type="AVAILABILITY" category="EVENT"/></DataItems></Agent>' +
        '<Device id="d" name="mill" uuid="m"><DataItems><DataItem id="x" type="EXECUTION" category="EVENT"><Source>exec</Source></DataItem></DataItems></Device></Devices></MTConnectDevices>',
    );
    expect(withAgent.devices.map((d) => d.name)).toEqual(['mill']);
    expect(withAgent.devices[0]?.dataItems[0]?.source).toBe('exec');
  });

  it('finds each role by type and subType, preferring the listed subTypes', () => {
    const roles = rolesOf(pickDevice(parseDevices(readFileSync(LATHE_DEVICES, 'utf8')), undefined, 'the file'));
    expect({
      execution: roles.execution?.id, partCount: roles.partCount?.id, partsRequired: roles.partsRequired?.id, feedRate: roles.feedRate?.id,
      rapidOverride: roles.rapidOverride?.id, spindleSpeed: roles.spindleSpeed?.id, cycleTime: roles.cycleTime?.id,
      loads: roles.loads.map((d) => d.id), conditions: roles.conditions.map((d) => d.id),
    }).toEqual({
      execution: 'execution', partCount: 'part_count', partsRequired: 'part_target', feedRate: 'Fact', rapidOverride: 'Frapidovr', spindleSpeed: 'Sspeed', cycleTime: 'cycle_time',
      loads: ['Xload', 'Zload', 'Sload'], conditions: ['system', 'comms', 'motion', 'logic'],
    });
  });

  it('picks a device by name or uuid, and names the devices there are when it is not found or not given among several', () => {
    const doc = parseDevices('<MTConnectDevices><Devices><Device id="a" name="A" uuid="ua"/><Device id="b" name="B" uuid="ub"/></Devices></MTConnectDevices>');
    expect(pickDevice(doc, 'ub', 'x').name).toBe('B');
    expect(() => pickDevice(doc, 'C', 'the probe')).toThrow("the probe has no device 'C'; it has 'A' (uuid ua), 'B' (uuid ub)");
    expect(() => pickDevice(doc, undefined, 'the probe')).toThrow('set driverOptions.device');
  });

  it('reads a streams document: its header, and each observation with sequence, time, value and condition fields', () => {
    const doc = parseStreams(STREAMS);
    if (doc.kind !== 'streams') throw new Error('expected streams');
    expect(doc.header).toEqual({ deviceModelChangeTime: '2026-01-05T08:00:00Z', instanceId: 1700000000, nextSequence: 45, firstSequence: 1, lastSequence: 44 });
    expect(doc.observations).toEqual([
      { dataItemId: 'execution', type: 'EXECUTION', category: 'EVENT', sequence: 40, timestamp: '2026-01-05T08:00:00.123456Z', value: 'FEED_HOLD' },
      { dataItemId: 'part_count', type: 'PART_COUNT', subType: 'ALL', category: 'EVENT', sequence: 41, timestamp: '2026-01-05T08:00:00.000000Z', value: '121' },
      { dataItemId: 'asset_chg', type: 'ASSET_CHANGED', category: 'EVENT', sequence: 42, timestamp: '2026-01-05T08:00:00Z', value: 'T1', assetType: 'CuttingTool' },
      {
        dataItemId: 'system', type: 'SYSTEM', category: 'CONDITION', sequence: 43, timestamp: '2026-01-05T08:00:01Z', value: 'Spindle & overload',
        condition: { level: 'FAULT', nativeCode: '2051', nativeSeverity: '2', qualifier: 'HIGH' },
      },
      { dataItemId: 'logic', type: 'LOGIC_PROGRAM', category: 'CONDITION', sequence: 44, timestamp: '2026-01-05T08:00:01Z', value: '', condition: { level: 'NORMAL' } },
    ]);
  });

  it('reads an error document in both forms: <Error errorCode> and the 2.6+ <OutOfRange> with its ErrorMessage, and the instanceId', () => {
    const old = parseStreams('<MTConnectError><Header instanceId="5"/><Errors><Error errorCode="OUT_OF_RANGE">from too small</Error></Errors></MTConnectError>');
    expect(old).toEqual({ kind: 'error', instanceId: 5, errors: [{ code: 'OUT_OF_RANGE', message: 'from too small' }] });
    const current = parseStreams(
      '<MTConnectError><Header instanceId="6"/><Errors><OutOfRange><QueryParameter name="from"><Value>1</Value><Minimum>10</Minimum></QueryParameter>' +
        '<URI>/sample?from=1</URI><ErrorMessage>\'from\' must be at least 10</ErrorMessage></OutOfRange><NoDevice><URI>/x</URI></NoDevice></Errors></MTConnectError>',
    );
    expect(current).toEqual({ kind: 'error', instanceId: 6, errors: [{ code: 'OUT_OF_RANGE', message: "'from' must be at least 10" }, { code: 'NO_DEVICE', message: '' }] });
  });

  it('refuses what is not the document asked for: another root, a header without sequence numbers, an observation without a sequence', () => {
    expect(() => parseStreams('<MTConnectDevices/>')).toThrow('not an MTConnectStreams document (root <MTConnectDevices>)');
    expect(() => parseStreams('<MTConnectStreams><Header instanceId="1"/></MTConnectStreams>')).toThrow('the Header has no whole-number nextSequence, firstSequence, lastSequence');
    expect(() => parseStreams(STREAMS.replace('sequence="41"', 'sequence="x"'))).toThrow('<PartCount> lacks a whole-number sequence');
    expect(() => parseDevices('<MTConnectStreams/>')).toThrow('not an MTConnectDevices document');
  });

  it('bounds what it reads: document size, depth, element count, collected text; refuses a DOCTYPE and XML that is not well-formed', () => {
    const limits = { maxChars: 10_000, maxDepth: 8, maxElements: 50, maxTextChars: 100 };
    const handlers = { open: () => true, close: () => undefined };
    const read = (xml: string) => () => readXml(xml, handlers, limits);
    expect(read('<a>'.repeat(5_000))).toThrow('longer than 10000');
    expect(read(`${'<a>'.repeat(9)}${'</a>'.repeat(9)}`)).toThrow('nested deeper than 8');
    expect(read(`<r>${'<a/>'.repeat(60)}</r>`)).toThrow('more than 50 elements');
    expect(read(`<r>${'x'.repeat(101)}</r>`)).toThrow('text of <r> is longer than 100 characters');
    expect(read('<!DOCTYPE r [<!ENTITY a "aaaa">]><r>&a;</r>')).toThrow('a DOCTYPE is not accepted');
    expect(read('<r><a></r>')).toThrow(XmlProblem);
    expect(read('<r>')).toThrow('not well-formed XML');
  });

  it('reads assets from an MTConnectAssets document and from one asset element, and an agent\'s asset error', () => {
    const doc = parseAssets(`<MTConnectAssets><Header/><Assets>${TOOL('<ToolLife type="MINUTES" countDirection="UP" limit="60">15</ToolLife>')}<File assetId="F1" timestamp="2026-01-05T08:00:00Z"/></Assets></MTConnectAssets>`);
    if (doc.kind !== 'assets') throw new Error('expected assets');
    expect(doc.assets.map((a) => [a.assetId, a.type, a.removed])).toEqual([['T12', 'CuttingTool', false], ['F1', 'File', false]]);
    expect(doc.assets[0]?.tool).toEqual({ toolId: '12', programToolNumber: '5', programToolGroup: '3', life: [{ type: 'MINUTES', countDirection: 'UP', limit: 60, value: 15 }] });
    const one = parseAssets(TOOL('', ' removed="true"'), undefined, 'from-the-line');
    expect(one.kind === 'assets' && one.assets[0]).toMatchObject({ assetId: 'from-the-line', removed: true });
    expect(parseAssets('<MTConnectError><Header/><Errors><AssetNotFound><AssetId>Q</AssetId><URI>/asset/Q</URI><ErrorMessage>no Q</ErrorMessage></AssetNotFound></Errors></MTConnectError>'))
      .toEqual({ kind: 'error', errors: [{ code: 'ASSET_NOT_FOUND', message: 'no Q' }] });
  });

  it('turns a cutting tool\'s first life entry with a limit into a ToolLife record, counting up or down', () => {
    const tool = (life: string): ParsedAsset => {
      const doc = parseAssets(TOOL(life), undefined, 'T');
      if (doc.kind !== 'assets' || !doc.assets[0]) throw new Error('expected one asset');
      return doc.assets[0];
    };
    expect(toolLifeOf(tool('<ToolLife type="WEAR" countDirection="UP" limit="1">0.2</ToolLife><ToolLife type="PART_COUNT" countDirection="DOWN" limit="200">150</ToolLife>')))
      .toEqual({ toolNum: 5, groupNum: 3, offsetNum: 0, used: 50, limit: 200, unit: 'count', remainingPercent: 75 });
    expect(toolLifeOf(tool('<ToolLife type="MINUTES" countDirection="UP" limit="90">81</ToolLife>')))
      .toEqual({ toolNum: 5, groupNum: 3, offsetNum: 0, used: 81, limit: 90, unit: 'minutes', remainingPercent: 10 });
    expect(toolLifeOf(tool('<ToolLife type="MINUTES" countDirection="UP" limit="0">81</ToolLife>'))).toBeUndefined();
  });
});
