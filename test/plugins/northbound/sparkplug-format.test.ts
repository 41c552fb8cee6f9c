/**
 * Sparkplug B as the specification's operational rules say (bdSeq, seq,
 * births, deaths, aliases, rebirth, is_historical), each payload decoded
 * with Eclipse Tahu's sparkplug-payload as a host application would.
 */
import { get } from 'sparkplug-payload';
import type { UMetric, UPayload } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FleetStates, MachineNow } from '../../../plugins/northbound/fleet-view.js';
import type { OutMessage } from '../../../plugins/northbound/format.js';
import { SparkplugFormat } from '../../../plugins/northbound/sparkplug-format.js';
import { cncStatus, openHistory, stateData, type TestHistory } from './history-rows.js';

const codec = get('spBv1.0')!;
const NOW = 1_800_000_100_000;
const T = 1_800_000_000_000;

const decode = (m: OutMessage): UPayload => codec.decodePayload(m.payload as Buffer);
const num = (v: unknown) => (v !== null && typeof v === 'object' ? Number(String(v)) : v);
/** A metric as plain values: name, alias, type, value, historical. */
const plain = (m: UMetric) => ({ name: m.name, alias: m.alias === undefined || m.alias === null ? undefined : num(m.alias), type: m.type, value: num(m.value), ts: num(m.timestamp), historical: m.isHistorical === true });

function fleetOf(machines: MachineNow[]): FleetStates {
  return { machines: () => machines, machine: (id) => machines.find((m) => m.machineID === id) };
}

describe('Sparkplug B format', () => {
  let history: TestHistory;
  let kept: number[];
  let machines: MachineNow[];
  const make = (lastBdSeq = -1) =>
    new SparkplugFormat({ groupId: 'Lyon', edgeNodeId: 'gw-1', version: '1.2.3', fleet: fleetOf(machines), db: history.db, now: () => NOW, lastBdSeq, keepBdSeq: (n) => kept.push(n) });
  beforeEach(async () => {
    history = await openHistory();
    kept = [];
    machines = [{ machineID: 'M1', state: 'running', reason: 'running: now' }];
  });
  afterEach(() => history.close());

  it('each CONNECT\'s will is an NDEATH with the next bdSeq (kept, 255 followed by 0); the NBIRTH carries the same bdSeq, seq 0 and Node Control/Rebirth false without an alias', async () => {
    const format = make(254);
    const wills = [format.will(), format.will(), format.will()];
    expect(kept).toEqual([255, 0, 1]);
    expect(wills.map((w) => [w.topic, w.qos, w.retain])).toEqual(Array(3).fill(['spBv1.0/Lyon/NDEATH/gw-1', 1, false]));
    const death = codec.decodePayload(wills[2]!.payload as Buffer);
    expect(death.metrics?.map(plain)).toEqual([expect.objectContaining({ name: 'bdSeq', type: 'Int64', value: 1 })]);
    expect(death.seq).toBeUndefined();
    const [nbirth] = await format.births(0);
    expect(nbirth!.topic).toBe('spBv1.0/Lyon/NBIRTH/gw-1');
    const payload = decode(nbirth!);
    expect(num(payload.seq)).toBe(0);
    expect(payload.metrics?.map(plain)).toEqual([
      expect.objectContaining({ name: 'bdSeq', type: 'Int64', value: 1, alias: undefined }),
      expect.objectContaining({ name: 'Node Control/Rebirth', type: 'Boolean', value: false, alias: undefined }),
      expect.objectContaining({ name: 'Properties/Version', type: 'String', value: '1.2.3' }),
    ]);
    expect(decode(format.farewell()[0]!).metrics?.map(plain)).toEqual([expect.objectContaining({ name: 'bdSeq', value: 1 })]);
    expect(format.subscriptions()).toEqual(['spBv1.0/Lyon/NCMD/gw-1']);
  });

  it('a DBIRTH declares every metric with name, alias unique across the edge node, type and its latest value from the history; a DDATA carries a row by alias only, with its time, History/seq and is_historical from the backlog', async () => {
    machines.push({ machineID: 'M2', state: 'idle', reason: 'idle: now' });
    const before = await history.write([{ machineID: 'M1', cls: 'CNCStatus', ts: T, data: cncStatus('RUNNING', T - 10) }, { machineID: 'M1', cls: 'State', ts: T, data: stateData('running') }]);
    const format = make();
    format.will();
    const births = await format.births(before[1]!.seq);
    expect(births.map((m) => m.topic)).toEqual(['spBv1.0/Lyon/NBIRTH/gw-1', 'spBv1.0/Lyon/DBIRTH/gw-1/M1', 'spBv1.0/Lyon/DBIRTH/gw-1/M2']);
    const m1 = decode(births[1]!).metrics!.map(plain);
    const m2 = decode(births[2]!).metrics!.map(plain);
    expect(m1.every((m) => typeof m.name === 'string' && typeof m.alias === 'number')).toBe(true);
    expect(new Set([...m1, ...m2].map((m) => m.alias)).size).toBe(m1.length + m2.length);
    expect(m1.find((m) => m.name === 'CNCStatus/adjustedStatus')).toMatchObject({ type: 'String', value: 'RUNNING', ts: T });
    expect(m1.find((m) => m.name === 'CNCStatus/time')).toMatchObject({ type: 'DateTime', value: T - 10 });
    expect(m1.find((m) => m.name === 'State/state')).toMatchObject({ value: 'running' });
    expect(m1.find((m) => m.name === 'Count/partsTotal')).toMatchObject({ type: 'Double', value: null });
    expect(m2.find((m) => m.name === 'State/state')).toMatchObject({ value: null });

    const rows = await history.write([{ machineID: 'M1', cls: 'Count', ts: T + 5000, data: { delta: 1, partCount: 7, partsTotal: 1007, lastCycleTime: 54.5, program: 'O1000' } }]);
    await format.prepare(rows);
    const live = format.messages(rows, 0, false);
    expect(live.map((m) => m.topic)).toEqual(['spBv1.0/Lyon/DDATA/gw-1/M1']);
    const data = decode(live[0]!).metrics!.map(plain);
    const aliasOf = (name: string) => m1.find((m) => m.name === name)!.alias;
    expect(data).toEqual([
      { name: undefined, alias: aliasOf('Count/delta'), type: 'Double', value: 1, ts: T + 5000, historical: false },
      { name: undefined, alias: aliasOf('Count/partCount'), type: 'Double', value: 7, ts: T + 5000, historical: false },
      { name: undefined, alias: aliasOf('Count/partsTotal'), type: 'Double', value: 1007, ts: T + 5000, historical: false },
      { name: undefined, alias: aliasOf('Count/lastCycleTime'), type: 'Double', value: 54.5, ts: T + 5000, historical: false },
      { name: undefined, alias: aliasOf('Count/program'), type: 'String', value: 'O1000', ts: T + 5000, historical: false },
      { name: undefined, alias: aliasOf('History/seq'), type: 'UInt64', value: rows[0]!.seq, ts: T + 5000, historical: false },
    ]);
    const backlog = format.messages(rows, 0, true);
    expect(decode(backlog[0]!).metrics!.every((m) => m.isHistorical === true)).toBe(true);
  });

  it('every message after the NBIRTH carries seq one more than the one before, 255 followed by 0', async () => {
    const format = make();
    format.will();
    const births = await format.births(0);
    const rows = await history.write(Array.from({ length: 300 }, (_, i) => ({ machineID: 'M1', cls: 'Heartbeat', ts: T + i * 1000, data: { state: 'running', connection: 'online', statusStale: false } })));
    await format.prepare(rows);
    const messages = [...births, ...rows.flatMap((_, i) => format.messages(rows, i, false))];
    const seqs = messages.map((m) => num(decode(m).seq));
    expect(seqs.slice(0, 3)).toEqual([0, 1, 2]);
    seqs.forEach((seq, i) => expect(seq, `message ${i}`).toBe(i % 256));
    expect(seqs.length).toBe(302);
  });

  it('a State row saying offline gives its DDATA then a DDEATH; the device\'s rows wait, and its next State row gives a DBIRTH with its values', async () => {
    const format = make();
    format.will();
    await format.births(0);
    const rows = await history.write([
      { machineID: 'M1', cls: 'State', ts: T, data: stateData('offline', 'offline') },
      { machineID: 'M1', cls: 'Heartbeat', ts: T + 60_000, data: { state: 'offline', connection: 'offline', statusStale: true } },
      { machineID: 'M1', cls: 'State', ts: T + 70_000, data: stateData('running') },
      { machineID: 'M1', cls: 'Heartbeat', ts: T + 80_000, data: { state: 'running', connection: 'online', statusStale: false } },
    ]);
    await format.prepare(rows);
    const out = rows.map((_, i) => format.messages(rows, i, false));
    expect(out.map((messages) => messages.map((m) => m.topic.split('/')[2]))).toEqual([['DDATA', 'DDEATH'], [], ['DBIRTH'], ['DDATA']]);
    const rebirth = decode(out[2]![0]!).metrics!.map(plain);
    expect(rebirth.find((m) => m.name === 'State/state')?.value).toBe('running');
    expect(rebirth.find((m) => m.name === 'Heartbeat/state')?.value).toBe('offline');
    expect(rebirth.find((m) => m.name === 'History/seq')?.value).toBe(rows[2]!.seq);
  });

  it('a device offline when the session starts gets no DBIRTH until it is back; a machine made inactive or deleted gets its DDEATH at once', async () => {
    const earlier = await history.write([{ machineID: 'M1', cls: 'State', ts: T, data: stateData('offline', 'offline') }]);
    machines.push({ machineID: 'M2', state: 'running', reason: 'running: now' }, { machineID: 'M3', state: 'inactive', reason: 'inactive: machine isActive=false' });
    const format = make();
    format.will();
    const births = await format.births(earlier[0]!.seq);
    expect(births.map((m) => m.topic)).toEqual(['spBv1.0/Lyon/NBIRTH/gw-1', 'spBv1.0/Lyon/DBIRTH/gw-1/M2']);
    expect(format.machineGone('M1', false)).toEqual([]);
    expect(format.machineGone('M2', false).map((m) => m.topic)).toEqual(['spBv1.0/Lyon/DDEATH/gw-1/M2']);
    expect(format.machineGone('M2', true)).toEqual([]);
  });

  it('a field no birth declared gets a new DBIRTH before its data', async () => {
    const format = make();
    format.will();
    await format.births(0);
    const rows = await history.write([{ machineID: 'M1', cls: 'Count', ts: T, data: { delta: 1, partsTotal: 3, shift: 'B' } }, { machineID: 'M1', cls: 'Count', ts: T + 1, data: { delta: 1, partsTotal: 4, shift: 'B' } }]);
    await format.prepare(rows);
    const first = format.messages(rows, 0, false);
    expect(first.map((m) => m.topic)).toEqual(['spBv1.0/Lyon/DBIRTH/gw-1/M1']);
    expect(decode(first[0]!).metrics!.map(plain).find((m) => m.name === 'Count/shift')).toMatchObject({ type: 'String', value: 'B', alias: expect.any(Number) });
    expect(format.messages(rows, 1, false).map((m) => m.topic)).toEqual(['spBv1.0/Lyon/DDATA/gw-1/M1']);
  });

  it('an NCMD with Node Control/Rebirth true asks for the births again; another metric, false, another topic or bytes that are no payload do not', () => {
    const format = make();
    const ncmd = (metrics: UMetric[]) => Buffer.from(codec.encodePayload({ timestamp: NOW, metrics }));
    const topic = 'spBv1.0/Lyon/NCMD/gw-1';
    expect(format.command(topic, ncmd([{ name: 'Node Control/Rebirth', type: 'Boolean', value: true }]))).toBe(true);
    expect(format.command(topic, ncmd([{ name: 'Node Control/Rebirth', type: 'Boolean', value: false }]))).toBe(false);
    expect(format.command(topic, ncmd([{ name: 'Node Control/Reboot', type: 'Boolean', value: true }]))).toBe(false);
    expect(format.command('spBv1.0/Lyon/NCMD/other', ncmd([{ name: 'Node Control/Rebirth', type: 'Boolean', value: true }]))).toBe(false);
    expect(format.command(topic, Buffer.from('not a payload \u0000\u00ff'))).toBe(false);
  });
});
