import { XMLBuilder, XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { deviceStreamXml, observationXml, streamsXml } from '../../../plugins/mtconnect-agent/documents-xml.js';
import { byteLength, isoTime, sortForPrinting, xmlEscaped } from '../../../plugins/mtconnect-agent/documents.js';
import type { ComponentDef, DataItemDef } from '../../../plugins/mtconnect-agent/model.js';
import type { Observation } from '../../../plugins/mtconnect-agent/replay.js';
import type { Served } from '../../../plugins/mtconnect-agent/served.js';

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false, parseAttributeValue: false, trimValues: false });

function device(n = 1): { device: ComponentDef; path: ComponentDef; items: Record<string, DataItemDef> } {
  const dev = { element: 'Device', id: `M${n}`, name: `M${n} <&> "one"`, uuid: `u-${n}`, dataItems: [], components: [] } as unknown as ComponentDef;
  dev.device = dev;
  const path: ComponentDef = { element: 'Path', id: `M${n}_path`, name: 'path', dataItems: [], components: [], device: dev, parentComponent: dev };
  dev.components.push(path);
  const item = (id: string, type: string, category: DataItemDef['category'], parent: ComponentDef): DataItemDef => {
    const def: DataItemDef = { id: `M${n}_${id}`, type, category, name: id, source: { machineID: `M${n}`, item: 'program' }, parent };
    parent.dataItems.push(def);
    return def;
  };
  return {
    device: dev,
    path,
    items: {
      avail: item('avail', 'AVAILABILITY', 'EVENT', dev),
      program: item('program', 'PROGRAM', 'EVENT', path),
      exec: item('exec', 'EXECUTION', 'EVENT', path),
      system: item('system', 'SYSTEM', 'CONDITION', path),
      pos: item('pos', 'POSITION', 'SAMPLE', path),
    },
  };
}

const o = (seq: number, value: string, extra: Partial<Observation> = {}): Observation => ({ machineID: 'M1', item: 'program', seq, ts: 1_764_000_000_000 + seq, value, ...extra });

describe('observation elements written once and placed again', () => {
  it('every text an observation carries is escaped once: markup characters, quotes, and characters XML cannot carry', () => {
    expect(xmlEscaped('a & b < c > d " e \' f')).toBe('a &amp; b &lt; c &gt; d " e \' f');
    expect(xmlEscaped('bell\u0007 lone \uD800 ok \uD83D\uDE00')).toBe('bell\uFFFD lone \uFFFD ok \uD83D\uDE00');
    const { items } = device();
    const text = 'O1000 <ROUGH> & "finish" \'2\'\u0001';
    const element = observationXml({ def: items.program!, o: o(7, text) });
    const parsed = parser.parse(element).Program;
    expect(parsed['#text']).toBe('O1000 <ROUGH> & "finish" \'2\'\uFFFD');
    expect(parsed['@_sequence']).toBe('7');
    const fault = observationXml({ def: items.system!, o: o(8, 'DOOR "open" & <locked>', { level: 'Fault', nativeCode: 'E"1<', nativeSeverity: "'hi'" }) });
    const f = parser.parse(fault).Fault;
    expect([f['#text'], f['@_nativeCode'], f['@_conditionId'], f['@_nativeSeverity'], f['@_type']]).toEqual(['DOOR "open" & <locked>', 'E"1<', 'E"1<', "'hi'", 'SYSTEM']);
    // An empty value is an empty element, as the schema's Unavailable or Normal with no text.
    expect(observationXml({ def: items.system!, o: o(9, '', { level: 'Normal' }) })).toMatch(/^<Normal [^>]*\/>$/);
  });

  it('a DeviceStream put together from kept elements is the one written whole, and places each kept element as it was', () => {
    const { items } = device();
    const served: Served[] = [
      { def: items.pos!, o: o(5, '12.5') },
      { def: items.exec!, o: o(3, 'ACTIVE') },
      { def: items.system!, o: o(4, 'LUBE & <oil>', { level: 'Warning', nativeCode: '2002' }) },
      { def: items.program!, o: o(2, 'O<1>') },
      { def: items.avail!, o: o(1, 'AVAILABLE') },
    ];
    sortForPrinting(served);
    const whole = deviceStreamXml(served);
    const kept = new Map<Observation, string>(served.map((s) => [s.o, `${observationXml(s)}`]));
    const placed: Observation[] = [];
    const fromKept = deviceStreamXml(served, (s) => {
      placed.push(s.o);
      return kept.get(s.o)!;
    });
    expect(fromKept).toBe(whole);
    // The same element as the builder writes it whole from plain objects.
    const at = (seq: number) => new Date(1_764_000_000_000 + seq).toISOString();
    const element = (id: string, seq: number, text: string, extra: Record<string, unknown> = {}) => ({ '@_dataItemId': `M1_${id}`, '@_timestamp': at(seq), '@_name': id, '@_sequence': seq, ...extra, '#text': text });
    const reference = new XMLBuilder({ ignoreAttributes: false, attributeNamePrefix: '@_', textNodeName: '#text', format: false, suppressEmptyNode: true }).build({
      DeviceStream: {
        '@_name': 'M1 <&> "one"',
        '@_uuid': 'u-1',
        ComponentStream: [
          { '@_component': 'Device', '@_name': 'M1 <&> "one"', '@_componentId': 'M1', Events: { Availability: element('avail', 1, 'AVAILABLE') } },
          {
            '@_component': 'Path',
            '@_name': 'path',
            '@_componentId': 'M1_path',
            Samples: { Position: element('pos', 5, '12.5') },
            Events: { Execution: element('exec', 3, 'ACTIVE'), Program: element('program', 2, 'O<1>') },
            Condition: { Warning: element('system', 4, 'LUBE & <oil>', { '@_type': 'SYSTEM', '@_conditionId': '2002', '@_nativeCode': '2002' }) },
          },
        ],
      },
    });
    expect(whole).toBe(reference);
    expect(placed).toHaveLength(served.length);
    // The kept text is placed as it is: a marker in a kept element shows up in the device's stream.
    const marked = deviceStreamXml(served, (s) => kept.get(s.o)!.replace('>12.5<', '>99<'));
    expect(marked).toContain('>99</Position>');
    const doc = parser.parse(whole).DeviceStream;
    expect(doc['@_name']).toBe('M1 <&> "one"');
    const pathStream = doc.ComponentStream.find((c: Record<string, string>) => c['@_component'] === 'Path');
    expect(pathStream.Samples.Position['#text']).toBe('12.5');
    expect(pathStream.Events.Program['#text']).toBe('O<1>');
    expect(pathStream.Condition.Warning['#text']).toBe('LUBE & <oil>');
  });

  it('a Streams document is sent as chunks of about 64 KiB, never joined into one buffer, and reads as one document', () => {
    // 400 devices of 5 observations: parts of about 1 KiB each, gathered into chunks.
    const served: Served[] = Array.from({ length: 400 }, (_, d) => device(d + 1).items).flatMap((items) =>
      Object.values(items).map((def, i) => ({ def, o: o(i + 1, def.category === 'CONDITION' ? '' : `${i}.000`, def.category === 'CONDITION' ? { level: 'Normal' } : {}) })),
    );
    const facts = { instanceId: 1, version: '1.0', sender: 'gw', deviceModelChangeTime: 0 };
    const chunks = streamsXml(facts, Date.now(), { firstSequence: 1, lastSequence: 5, nextSequence: 6, bufferSize: 5 }, served);
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks.slice(0, -1)) expect(c.length).toBeGreaterThanOrEqual(64 * 1024);
    for (const c of chunks) expect(c.length).toBeLessThan(64 * 1024 + 4096);
    expect(byteLength(chunks)).toBe(chunks.reduce((n, c) => n + c.length, 0));
    const streams = parser.parse(Buffer.concat(chunks).toString()).MTConnectStreams.Streams.DeviceStream;
    expect(streams).toHaveLength(400);
    expect(streams.map((d: Record<string, string>) => d['@_uuid'])).toEqual(Array.from({ length: 400 }, (_, d) => `u-${d + 1}`).sort());
  });

  it('timestamps are the ISO text Date writes, whichever second came before', () => {
    const times = [0, 1, 999, 1000, 1_764_000_000_007, 1_764_000_000_070, 1_764_000_000_700, 1_764_000_001_000, 1_764_000_000_999, 253_402_300_799_999, 253_402_300_800_000, -1, 1.5, 1_764_000_000_000.25];
    for (const ms of [...times, ...times.reverse()]) expect(isoTime(ms), String(ms)).toBe(new Date(ms).toISOString());
  });
});
