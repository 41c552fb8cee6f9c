/**
 * The fleet page's tiles (plugins/console/web/gateway/model.ts) from the
 * gateway's own answers: the CNCStatus entry is built by the gateway's fleet
 * (core/roles/gateway/fleet/entries.ts) from a machine's snapshot with its
 * derived state, and goes through JSON and the entry's schema as the page's
 * worker receives it, so the tile reads exactly what the gateway sends.
 */
import { describe, expect, it } from 'vitest';
import { statusEntrySchema } from '../../../core/roles/gateway/api-outputs.js';
import { deriveState } from '../../../core/roles/gateway/fleet/derive-state.js';
import { statusEntry } from '../../../core/roles/gateway/fleet/entries.js';
import { machineConfigSchema } from '../../../core/roles/gateway/machine-config.js';
import { mergeTiles, type MachineMeta } from '../../../plugins/console/web/gateway/model.js';
import { makeStatus } from '../../fixtures/scripted-client.js';

const NOW = Date.UTC(2026, 2, 28, 23, 30, 0);

/** S1's CNCStatus entry as the gateway answers it, while one alarm is active. */
function entryInAlarm() {
  const config = machineConfigSchema.parse({ machineID: 'S1', name: 'Spindle one', driver: 'sim' });
  const status = makeStatus({ cncStatus: 'STOP', adjustedStatus: 'STOPPED', alarmStatus: true, alarmLevel: 'alarm', programStatus: 'stopped', time: NOW });
  const sample = { status, alarms: [{ code: 'EX1001', message: 'SPINDLE OVERHEAT', level: 'alarm' as const, since: NOW - 10_000 }] };
  const derived = deriveState({ isActive: true, statusTaskEnabled: true, connection: { state: 'online' }, status: { value: status, sampledAt: NOW }, statusIntervalMs: 1000, now: NOW });
  const entry = statusEntry({ config, connection: { state: 'online', since: NOW - 60_000, attempts: 0, failures: 0 }, cache: { CNCStatus: { value: sample, sampledAt: NOW } }, derived });
  return statusEntrySchema.parse(JSON.parse(JSON.stringify(entry)));
}

const machine: MachineMeta = { machineID: 'S1', name: 'Spindle one', system: 'FANUC', model: '0i-MF', machineType: 'mill', isActive: true };

describe('fleet tiles', () => {
  it('GW-15 a tile in alarm shows the alarm\'s code and message as the gateway sends them', () => {
    const inAlarm = entryInAlarm();
    expect(inAlarm.state).toBe('alarm');
    const tiles = mergeTiles(new Map(), [machine], { status: new Map([['S1', inAlarm]]), errors: new Map(), counts: new Map() });
    const tile = tiles.get('S1');
    expect(tile?.state).toBe('alarm');
    expect(tile?.alarms).toBe(1);
    expect(tile?.alarmText).toBe('EX1001 SPINDLE OVERHEAT');
  });
});
