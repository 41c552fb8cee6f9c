/**
 * The same emergency stop through every driver's mapping gives the same
 * status: alarmLevel `emergency`, alarmStatus true, emergency true,
 * adjustedStatus EMERGENCY, even where the peer reports no alarm beside it.
 */
import { describe, it } from 'vitest';
import { ALARM_LEVELS, type CncStatus } from '../../core/driver-seam/driver.js';
import { EMERGENCY, ODBST_ALARM, toCncStatus as focasStatus } from '../../drivers/focas/mapping.js';
import { DEFAULT_REGISTER_MAP } from '../../drivers/modbus/default-map.js';
import { statusFrom } from '../../drivers/modbus/mapping.js';
import { EXECUTION_STATES, OPERATING_MODES, PROGRAM_STATUSES, registerMapSchema } from '../../drivers/modbus/register-map.js';
import { EMERGENCY_STOP_WORDS, MODE_WORDS, SEVERITY_WORDS } from '../../drivers/mqtt/default-mapping.js';
import { readFamily } from '../../drivers/mqtt/mapping.js';
import { mqttOptionsSchema, type MqttOptionsInput } from '../../drivers/mqtt/options.js';
import { simulatedMachine } from '../../drivers/mqtt/publisher.js';
import { DataItemIndex } from '../../drivers/mtconnect/device-model.js';
import { readFamily as mtconnectRead } from '../../drivers/mtconnect/mapping.js';
import { ObservationStore } from '../../drivers/mtconnect/observations.js';
import { loadLathe } from '../../drivers/mtconnect/replay.js';
import { rolesOf } from '../../drivers/mtconnect/roles.js';
import { ShdrInterpreter } from '../../drivers/mtconnect/shdr-interpreter.js';
import { ValueStore } from '../../drivers/mqtt/value-store.js';
import { CHANNEL_MODES, CHANNEL_STATES, toAlarms, toCncStatus as opcuaStatus } from '../../drivers/opcua/mapping.js';
import { EMERGENCY_STOP_SCENARIO as S, expectEmergencyStopStatus } from '../fixtures/emergency-stop.js';

const NOW = Date.UTC(2026, 0, 5, 8, 0, 0);

function mqttStatus(options: MqttOptionsInput, messages: Record<string, unknown>): CncStatus {
  const parsed = mqttOptionsSchema.parse(options);
  const store = new ValueStore(parsed.topics, 'M1', parsed.inactivityTimeoutMs);
  for (const [topic, payload] of Object.entries(messages)) store.ingest(topic, Buffer.from(JSON.stringify(payload)), NOW);
  const read = readFamily(store, 'status', NOW);
  if (read.kind !== 'value') throw new Error(`mqtt status read: ${read.kind} ${read.detail}`);
  return read.value;
}

describe('an emergency stop with no controller alarm reads the same through every driver', () => {
  it('modbus (default register map: emergency input on, alarmLevel register none, alarmStatus input off)', () => {
    const map = registerMapSchema.parse(DEFAULT_REGISTER_MAP);
    const values = new Map<string, number | boolean | string>([
      ['status.adjustedStatus', EXECUTION_STATES.indexOf('STOPPED')],
      ['status.mode', OPERATING_MODES.indexOf(S.mode)],
      ['status.programStatus', PROGRAM_STATUSES.indexOf('stopped')],
      ['status.alarmLevel', ALARM_LEVELS.indexOf(S.controllerAlarm)],
      ['status.cncStatus', 'STOP'],
      ['status.program', S.program],
      ['status.emergency', S.emergencyStopEngaged],
      ['status.alarmStatus', false],
    ]);
    expectEmergencyStopStatus('modbus', statusFrom(map, values, NOW));
  });

  it('mqtt (default mapping: emergencyStop TRIGGERED, severity NORMAL, empty alarm list)', () => {
    const status = mqttStatus(
      {},
      {
        'cnc/M1/status': {
          controller: 'STOP',
          execution: 'STOPPED',
          mode: MODE_WORDS[S.mode],
          severity: SEVERITY_WORDS[S.controllerAlarm],
          alarmActive: false,
          emergencyStop: EMERGENCY_STOP_WORDS.engaged,
          programStatus: 'stopped',
          program: S.program,
          timestamp: NOW,
        },
        'cnc/M1/alarms': [],
      },
    );
    expectEmergencyStopStatus('mqtt', status);
  });

  it('mqtt (a mapping with an ESTOP execution word and no severity: the level comes from the empty alarm list)', () => {
    const status = mqttStatus(
      {
        topics: [
          {
            topic: 'plant/{machineID}/state',
            items: { 'status.adjustedStatus': { path: 'exec', map: { RUN: 'RUNNING', IDLE: 'STOPPED', ESTOP: 'EMERGENCY' } } },
            lists: { alarm: 'alarms' },
          },
        ],
      },
      { 'plant/M1/state': { exec: 'ESTOP', alarms: [] } },
    );
    expectEmergencyStopStatus('mqtt', status);
  });

  it('focas (cnc_statinfo emergency = EMG, alarm = 0, run = STOP)', () => {
    const statinfo = { hdck: 0, tmmode: 0, aut: 1, run: 1, motion: 0, mstb: 0, emergency: EMERGENCY.EMG, alarm: ODBST_ALARM.NONE, edit: 0 };
    expectEmergencyStopStatus('focas', focasStatus({ statinfo, exeprg: { name: S.program, o_num: 1000 }, operatorMessages: 0 }, NOW));
  });

  it('opcua (the emergency stop is an active condition at emergency severity; channel Interrupted)', () => {
    const alarms = toAlarms([{ code: 'EStop', active: true, message: 'Emergency stop', severity: 1000, time: NOW }], { alarmSeverity: 500, emergencySeverity: 1000 }, NOW);
    const status = opcuaStatus({
      channelState: CHANNEL_STATES.indexOf('Interrupted'),
      channelMode: CHANNEL_MODES.indexOf('Automatic'),
      programName: S.program,
      programState: 'Interrupted',
      alarms,
      time: NOW,
    });
    expectEmergencyStopStatus('opcua', status);
  });

  it('mtconnect (adapter lines: EMERGENCY_STOP TRIGGERED, EXECUTION STOPPED, the SYSTEM condition NORMAL)', () => {
    const { model } = loadLathe();
    const store = new ObservationStore({ maxActiveConditionsPerItem: 10, maxAssets: 10 });
    const interpreter = new ShdrInterpreter(
      {
        index: new DataItemIndex(model), deviceNames: [], maxFieldsPerLine: 100, maxAssetChars: 10_000, maxClockAheadMs: 60_000,
        assetLimits: { maxChars: 10_000, maxDepth: 16, maxElements: 1_000, maxTextChars: 1_000 },
      },
      {
        value: (item, value, time) => store.setValue(item.id, value, time, NOW),
        condition: (item, report, time) => store.setCondition(item.id, report, time),
        asset: () => undefined, removeAsset: () => undefined, removeAllAssets: () => undefined, command: () => undefined,
        problem: (kind, detail) => {
          throw new Error(`${kind}: ${detail}`);
        },
      },
    );
    const stamp = new Date(NOW).toISOString();
    interpreter.feed(`${stamp}|estop|TRIGGERED|execution|STOPPED|mode|${MODE_WORDS[S.mode]}|program|${S.program}`, NOW);
    interpreter.feed(`${stamp}|system|NORMAL||||`, NOW);
    const read = mtconnectRead(store, rolesOf(model), 'status');
    if (read.kind !== 'value') throw new Error(`mtconnect status read: ${read.kind} ${read.detail}`);
    expectEmergencyStopStatus('mtconnect', read.value);
  });

  it('simulator (the machine model during its emergency-stop segment, which every protocol simulator publishes)', () => {
    let now = NOW;
    const machine = simulatedMachine({ machineID: 'SIM1', seed: 7, machineType: 'mill', system: 'FANUC', timeScale: 60 }, () => now);
    let status = machine.status();
    // The schedule reaches an emergency stop within a few simulated days; step a minute of simulated time at a time.
    for (let step = 0; !status.emergency && step < 20_000; step++) {
      now += 1000;
      status = machine.status();
    }
    expectEmergencyStopStatus('simulator', status);
  });
});
