/**
 * Unified Namespace JSON: one message per history row with its sequence
 * number, time, class, the stored data as it is and the derived state the
 * row was recorded in; a retained state per machine and a retained gateway
 * status with its will.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FleetStates, MachineNow } from '../../../plugins/northbound/fleet-view.js';
import { UnsFormat } from '../../../plugins/northbound/uns-format.js';
import { cncStatus, openHistory, stateData, type TestHistory } from './history-rows.js';

const ROOT = 'acme/lyon/machining/gw-1';
const NOW = 1_800_000_100_000;

/** The fleet's states now, as a table. */
function fleetOf(machines: MachineNow[]): FleetStates {
  return { machines: () => machines, machine: (id) => machines.find((m) => m.machineID === id) };
}

describe('UNS JSON format', () => {
  let history: TestHistory;
  let format: UnsFormat;
  beforeEach(async () => {
    history = await openHistory();
    const fleet = fleetOf([{ machineID: 'M1', state: 'running', reason: 'running: now' }, { machineID: 'M2', state: 'idle', reason: 'idle: now' }]);
    format = new UnsFormat({ root: ROOT, gatewayName: 'gw-1', version: '1.2.3', fleet, db: history.db, now: () => NOW });
  });
  afterEach(() => history.close());

  it('publishes each row on {topicRoot}/{machineID}/{class} with seq, ts, machineID, class, the stored data and the state it was recorded in', async () => {
    const t = 1_800_000_000_000;
    const rows = await history.write([
      { machineID: 'M1', cls: 'State', ts: t, data: stateData('idle') },
      // A sample that changes the state, and its State row written with it.
      { machineID: 'M1', cls: 'CNCStatus', ts: t + 1000, data: cncStatus('RUNNING', t + 990) },
      { machineID: 'M1', cls: 'State', ts: t + 1000, data: stateData('running') },
      { machineID: 'M1', cls: 'Heartbeat', ts: t + 2000, data: { state: 'running', connection: 'online', statusStale: false } },
    ]);
    await format.prepare(rows);
    const messages = rows.map((_, i) => format.messages(rows, i, false));
    expect(messages.map((m) => m[0]?.topic)).toEqual([`${ROOT}/M1/State`, `${ROOT}/M1/CNCStatus`, `${ROOT}/M1/State`, `${ROOT}/M1/Heartbeat`]);
    const payloads = messages.map((m) => JSON.parse(String(m[0]?.payload)) as Record<string, unknown>);
    expect(payloads[1]).toEqual({ seq: rows[1]!.seq, ts: t + 1000, machineID: 'M1', class: 'CNCStatus', data: cncStatus('RUNNING', t + 990), state: 'running', reason: 'running: test' });
    expect(payloads.map((p) => p.state)).toEqual(['idle', 'running', 'running', 'running']);
    expect(payloads.map((p) => p.seq)).toEqual(rows.map((r) => r.seq));
    // The data is the stored JSON text itself.
    expect(String(messages[3]![0]!.payload)).toContain(`"data":${rows[3]!.data},`);
    expect(messages.every((m) => m[0]!.retain === false)).toBe(true);
  });

  it('a machine met in the middle of its history carries the state of its last State row before it', async () => {
    const t = 1_800_000_000_000;
    await history.write([{ machineID: 'M2', cls: 'State', ts: t, data: stateData('alarm') }, { machineID: 'M1', cls: 'State', ts: t, data: stateData('setup') }]);
    const later = await history.write([{ machineID: 'M2', cls: 'Heartbeat', ts: t + 60_000, data: { state: 'alarm', connection: 'online', statusStale: false } }]);
    await format.prepare(later);
    expect(JSON.parse(String(format.messages(later, 0, true)[0]!.payload))).toMatchObject({ machineID: 'M2', state: 'alarm', reason: 'alarm: test' });
    format.reset();
    const none = await history.write([{ machineID: 'M3', cls: 'Count', ts: t, data: { delta: 1 } }]);
    await format.prepare(none);
    expect(JSON.parse(String(format.messages(none, 0, false)[0]!.payload))).toMatchObject({ state: null, reason: null });
  });

  it('keeps a retained state per machine: the fleet now at the session start, then each live State row, never a backlog one or an older one', async () => {
    const births = await format.births();
    expect(births.map((m) => [m.topic, m.retain])).toEqual([[`${ROOT}/_gateway/status`, true], [`${ROOT}/M1/state`, true], [`${ROOT}/M2/state`, true]]);
    expect(JSON.parse(String(births[0]!.payload))).toEqual({ state: 'online', gateway: 'gw-1', version: '1.2.3', ts: NOW });
    expect(JSON.parse(String(births[1]!.payload))).toEqual({ machineID: 'M1', state: 'running', reason: 'running: now', ts: NOW });
    const rows = await history.write([
      { machineID: 'M1', cls: 'State', ts: NOW - 5000, data: stateData('alarm') },
      { machineID: 'M2', cls: 'State', ts: NOW + 1000, data: stateData('setup') },
      { machineID: 'M1', cls: 'State', ts: NOW + 2000, data: stateData('idle') },
    ]);
    await format.prepare(rows);
    const historical = format.messages(rows, 0, true);
    const older = format.messages(rows, 0, false);
    const live = format.messages(rows, 1, false);
    expect(historical.map((m) => m.topic)).toEqual([`${ROOT}/M1/State`]);
    expect(older.map((m) => m.topic)).toEqual([`${ROOT}/M1/State`]);
    expect(live.map((m) => m.topic)).toEqual([`${ROOT}/M2/State`, `${ROOT}/M2/state`]);
    expect(JSON.parse(String(live[1]!.payload))).toEqual({ machineID: 'M2', state: 'setup', reason: 'setup: test', ts: NOW + 1000 });
    expect(live[1]!.retain).toBe(true);
  });

  it('the will and a clean stop say the gateway is offline, retained; a deleted machine\'s retained state is removed, an inactive one says inactive', () => {
    const will = format.will();
    expect(will).toMatchObject({ topic: `${ROOT}/_gateway/status`, qos: 1, retain: true });
    expect(JSON.parse(String(will.payload))).toMatchObject({ state: 'offline', gateway: 'gw-1' });
    expect(format.farewell().map((m) => [m.topic, JSON.parse(String(m.payload)).state, m.retain])).toEqual([[`${ROOT}/_gateway/status`, 'offline', true]]);
    expect(format.machineGone('M2', true)).toEqual([{ topic: `${ROOT}/M2/state`, payload: '', retain: true }]);
    expect(JSON.parse(String(format.machineGone('M1', false)[0]!.payload))).toMatchObject({ machineID: 'M1', state: 'inactive' });
    expect(format.subscriptions()).toEqual([]);
  });
});
