import { describe, expect, it } from 'vitest';
import { deriveState, type DeriveStateInput } from '../../../../../core/roles/gateway/fleet/derive-state.js';
import type { CncStatus } from '../../../../../core/driver-seam/driver.js';
import { makeStatus } from '../../../../fixtures/scripted-client.js';
import { readFamily } from '../../../../../drivers/mtconnect/mapping.js';
import { ObservationStore, type ConditionReport } from '../../../../../drivers/mtconnect/observations.js';
import { loadLathe } from '../../../../../drivers/mtconnect/replay.js';
import { rolesOf } from '../../../../../drivers/mtconnect/roles.js';

const NOW = 1_800_000_000_000;

const status = (overrides: Partial<CncStatus> = {}): CncStatus => makeStatus({ time: NOW, ...overrides });

function input(overrides: Partial<DeriveStateInput> = {}): DeriveStateInput {
  return {
    isActive: true,
    statusTaskEnabled: true,
    connection: { state: 'online' },
    status: { value: status(), sampledAt: NOW - 500 },
    statusIntervalMs: 1000,
    now: NOW,
    ...overrides,
  };
}

describe('deriveState', () => {
  const table: { name: string; input: DeriveStateInput; state: string; reason: RegExp; stale?: boolean }[] = [
    { name: 'GW-22 inactive wins over everything', input: input({ isActive: false, statusTaskEnabled: false, connection: { state: 'stopped' } }), state: 'inactive', reason: /isActive=false/ },
    { name: 'GW-21 noData when the status task is not enabled', input: input({ statusTaskEnabled: false }), state: 'noData', reason: /CNCStatus task not enabled/ },
    { name: 'GW-21 noData (task disabled) wins over offline', input: input({ statusTaskEnabled: false, connection: { state: 'offline' }, status: undefined }), state: 'noData', reason: /not enabled/ },
    {
      name: 'GW-20 offline when the connection is down and the cached status is stale',
      input: input({ connection: { state: 'backoff', error: 'ECONNREFUSED' }, status: { value: status(), sampledAt: NOW - 10_000 } }),
      state: 'offline',
      reason: /connection=backoff, error="ECONNREFUSED"; last status 10s old/,
      stale: true,
    },
    { name: 'GW-20 offline when the connection never came up', input: input({ connection: { state: 'connecting' }, status: undefined }), state: 'offline', reason: /no status sampled yet/, stale: true },
    {
      name: 'GW-22 a brief link loss with a fresh status keeps the status-based state and says so',
      input: input({ connection: { state: 'backoff' }, status: { value: status(), sampledAt: NOW - 1500 } }),
      state: 'running',
      reason: /connection=backoff/,
      stale: false,
    },
    { name: 'GW-22 noData when online but no status sample yet', input: input({ status: undefined }), state: 'noData', reason: /no status sample yet while connection=online/, stale: false },
    {
      name: 'GW-22 noData when online but status reads keep failing',
      input: input({ status: { value: status(), sampledAt: NOW - 60_000 }, statusError: 'timeout' }),
      state: 'noData',
      reason: /status 60s old.*statusError="timeout"/,
    },
    { name: 'GW-22 alarm on emergency stop', input: input({ status: { value: status({ emergency: true, adjustedStatus: 'EMERGENCY', alarmLevel: 'emergency' }), sampledAt: NOW } }), state: 'alarm', reason: /emergency stop/ },
    { name: 'GW-22 alarm on an active alarm', input: input({ status: { value: status({ adjustedStatus: 'STOPPED', alarmStatus: true, alarmLevel: 'alarm' }), sampledAt: NOW } }), state: 'alarm', reason: /active alarm.*alarmLevel=alarm/ },
    { name: 'GW-22 alarm wins over running', input: input({ status: { value: status({ alarmStatus: true, alarmLevel: 'alarm' }), sampledAt: NOW } }), state: 'alarm', reason: /active alarm/ },
    { name: 'GW-22 a warning does not stop running', input: input({ status: { value: status({ alarmLevel: 'warning' }), sampledAt: NOW } }), state: 'running', reason: /alarmLevel=warning/ },
    { name: 'GW-22 running when executing', input: input(), state: 'running', reason: /^running: executing \(adjustedStatus=RUNNING, mode=AUTO/ },
    { name: 'GW-22 setup in MDI mode and not executing', input: input({ status: { value: status({ adjustedStatus: 'STOPPED', mode: 'MDI' }), sampledAt: NOW } }), state: 'setup', reason: /manual mode.*mode=MDI/ },
    { name: 'GW-22 setup in JOG mode', input: input({ status: { value: status({ adjustedStatus: 'RESET', mode: 'JOG' }), sampledAt: NOW } }), state: 'setup', reason: /mode=JOG/ },
    { name: 'GW-22 running in MDI mode while executing is running, not setup', input: input({ status: { value: status({ mode: 'MDI' }), sampledAt: NOW } }), state: 'running', reason: /mode=MDI/ },
    { name: 'GW-22 idle in AUTO when stopped', input: input({ status: { value: status({ cncStatus: 'STOPPED', adjustedStatus: 'STOPPED' }), sampledAt: NOW } }), state: 'idle', reason: /^idle: not executing \(adjustedStatus=STOPPED/ },
    { name: 'GW-22 idle on feed hold', input: input({ status: { value: status({ adjustedStatus: 'HOLD' }), sampledAt: NOW } }), state: 'idle', reason: /adjustedStatus=HOLD/ },
    {
      name: 'GW-22 an idle reason quotes the controller\'s own word when it says more than the normalised state',
      input: input({ status: { value: status({ cncStatus: 'OPTIONAL_STOP', adjustedStatus: 'STOPPED' }), sampledAt: NOW } }),
      state: 'idle',
      reason: /^idle: not executing, controller reports OPTIONAL_STOP \(adjustedStatus=STOPPED/,
    },
    {
      name: 'GW-22 an idle reason quotes no word that only repeats the normalised state, and at most 40 characters of one',
      input: input({ status: { value: status({ cncStatus: 'x'.repeat(500), adjustedStatus: 'STOPPED' }), sampledAt: NOW } }),
      state: 'idle',
      reason: /^idle: not executing, controller reports x{40}… \(adjustedStatus=STOPPED/,
    },
  ];

  for (const row of table) {
    it(row.name, () => {
      const result = deriveState(row.input);
      expect(result.state).toBe(row.state);
      expect(result.reason).toMatch(row.reason);
      if (row.stale !== undefined) expect(result.statusStale).toBe(row.stale);
    });
  }

  it('GW-15 statusStale is set only when the connection is down and the status is old', () => {
    expect(deriveState(input({ status: { value: status(), sampledAt: NOW - 60_000 } })).statusStale).toBe(false);
    expect(deriveState(input({ connection: { state: 'offline' }, status: { value: status(), sampledAt: NOW - 60_000 } })).statusStale).toBe(true);
    expect(deriveState(input({ connection: { state: 'offline' }, status: { value: status(), sampledAt: NOW - 100 } })).statusStale).toBe(false);
  });

  it('GW-22 every rule names itself first in the reason', () => {
    for (const row of table) {
      const result = deriveState(row.input);
      expect(result.reason.startsWith(`${result.state}:`)).toBe(true);
    }
  });
});

/**
 * The derived state of an MTConnect machine, from the values its adapter or
 * agent sends, through the driver's mapping (drivers/mtconnect/mapping.ts):
 * the table of docs/derived-states.md, "MTConnect". Offline (AVAILABILITY
 * UNAVAILABLE, a lost adapter) is the connection's part, in
 * test/drivers/mtconnect/client.test.ts.
 */
describe('deriveState of MTConnect values', () => {
  const { model } = loadLathe();
  const roles = rolesOf(model);
  const id = (name: string) => model.dataItems.find((d) => d.name === name)?.id as string;

  function mtconnectStatus(values: Record<string, string>, conditions: Record<string, ConditionReport> = {}): CncStatus {
    const store = new ObservationStore({ maxActiveConditionsPerItem: 10, maxAssets: 10 });
    const all: Record<string, string> = { estop: 'ARMED', mode: 'AUTOMATIC', program: 'O1001', ...values };
    for (const [name, value] of Object.entries(all)) store.setValue(id(name), value, NOW - 100, NOW - 100);
    for (const [name, report] of Object.entries(conditions)) store.setCondition(id(name), report, NOW - 100);
    const read = readFamily(store, roles, 'status');
    if (read.kind !== 'value') throw new Error(`status read: ${read.kind} ${read.detail}`);
    return read.value;
  }

  const rows: { name: string; values: Record<string, string>; conditions?: Record<string, ConditionReport>; state: string; reason: RegExp }[] = [
    { name: 'EXECUTION ACTIVE is running', values: { execution: 'ACTIVE' }, state: 'running', reason: /^running: executing \(adjustedStatus=RUNNING, mode=AUTO/ },
    { name: 'EXECUTION STOPPED is idle, and the reason says STOPPED', values: { execution: 'STOPPED' }, state: 'idle', reason: /^idle: not executing \(adjustedStatus=STOPPED/ },
    ...['READY', 'INTERRUPTED', 'FEED_HOLD', 'OPTIONAL_STOP', 'PROGRAM_STOPPED', 'PROGRAM_COMPLETED'].map((word) => ({
      name: `EXECUTION ${word} is idle, and the reason says ${word}`,
      values: { execution: word },
      state: 'idle',
      reason: new RegExp(`^idle: not executing, controller reports ${word} \\(`),
    })),
    {
      name: 'a FAULT condition is alarm', values: { execution: 'ACTIVE' }, conditions: { system: { level: 'FAULT', nativeCode: '2051', message: 'Spindle overload' } },
      state: 'alarm', reason: /^alarm: active alarm \(.*alarmLevel=alarm/,
    },
    {
      name: 'a WARNING condition does not stop running', values: { execution: 'ACTIVE' }, conditions: { logic: { level: 'WARNING', nativeCode: '17' } },
      state: 'running', reason: /alarmLevel=warning/,
    },
    { name: 'EMERGENCY_STOP TRIGGERED is alarm, whatever EXECUTION says', values: { execution: 'ACTIVE', estop: 'TRIGGERED' }, state: 'alarm', reason: /^alarm: emergency stop engaged \(adjustedStatus=EMERGENCY/ },
    { name: 'CONTROLLER_MODE MANUAL is setup', values: { execution: 'READY', mode: 'MANUAL' }, state: 'setup', reason: /^setup: .*mode=MANUAL/ },
    { name: 'CONTROLLER_MODE MANUAL_DATA_INPUT is setup', values: { execution: 'STOPPED', mode: 'MANUAL_DATA_INPUT' }, state: 'setup', reason: /mode=MDI/ },
    { name: 'CONTROLLER_MODE EDIT is setup', values: { execution: 'READY', mode: 'EDIT' }, state: 'setup', reason: /mode=EDIT/ },
    { name: 'a program executing in MANUAL_DATA_INPUT is running, not setup', values: { execution: 'ACTIVE', mode: 'MANUAL_DATA_INPUT' }, state: 'running', reason: /mode=MDI/ },
  ];

  for (const row of rows) {
    it(`GW-22 ${row.name}`, () => {
      const result = deriveState(input({ status: { value: mtconnectStatus(row.values, row.conditions), sampledAt: NOW } }));
      expect(result.state).toBe(row.state);
      expect(result.reason).toMatch(row.reason);
    });
  }
});
