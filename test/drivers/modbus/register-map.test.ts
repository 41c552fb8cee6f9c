import { describe, expect, it } from 'vitest';
import { DriverRegistry } from '../../../core/roles/gateway/fleet/driver-registry.js';
import { modbusDriver } from '../../../drivers/modbus/index.js';
import { registerDriver } from '../../../core/driver-seam/driver.js';
import { modbusClient, rejection } from './helpers.js';

const registry = new DriverRegistry([registerDriver(modbusDriver)]);
const problems = (driverOptions: Record<string, unknown>) => registry.validate({ driver: 'modbus', driverOptions });

const holding = (address: number, type: string, extra: Record<string, unknown> = {}) => ({ function: 'holding', address, type, ...extra });
const minimalStatus = {
  adjustedStatus: holding(0, 'uint16', { enum: { '0': 'STOPPED', '1': 'RUNNING' } }),
  alarmStatus: { function: 'coils', address: 0, type: 'bool' },
};

describe('modbus driverOptions', () => {
  it('accepts the documented minimal config and fills the defaults', () => {
    expect(problems({ unitId: 3 })).toEqual([]);
    const parsed = modbusDriver.configSchema.parse({ unitId: 3 });
    expect(parsed).toMatchObject({ unitId: 3, connectTimeoutMs: 3000, requestTimeoutMs: 1000, maxGapRegisters: 8, maxRegistersPerRead: 125, maxBitsPerRead: 2000 });
    expect(parsed.map.status).toBeDefined();
  });

  it('names the field, what was found and what is accepted', () => {
    expect(problems({ unitId: 300, requestTimeoutMs: 'soon', port: 502 })).toEqual([
      'driverOptions.unitId: found 300; unitId must be at most 255',
      'driverOptions.requestTimeoutMs: found "soon"; requestTimeoutMs must be a whole number of milliseconds',
      'driverOptions.(root): unknown field(s) \'port\'; remove them',
    ]);
  });

  it('rejects an enumeration on a float, a string without length and a bit function with a register type', () => {
    const lines = problems({
      map: {
        status: { ...minimalStatus, adjustedStatus: holding(0, 'float32', { enum: { '0': 'RESET' } }) },
        count: { partCount: holding(10, 'uint32'), partsTotal: holding(12, 'uint32'), program: holding(20, 'string') },
        toolNumber: { toolNumber: { function: 'discreteInputs', address: 0, type: 'uint16' } },
      },
    });
    expect(lines).toContain('driverOptions.map.status.adjustedStatus.enum: found {"0":"RESET"}; an enumeration needs an integer type (int16, uint16, int32, uint32), found type float32');
    expect(lines).toContain('driverOptions.map.count.program.length: found nothing; a string needs length: the number of registers it spans (2 characters each)');
    expect(lines).toContain('driverOptions.map.toolNumber.toolNumber.type: found "uint16"; discreteInputs hold single bits: type must be bool');
  });

  it('rejects enumeration values the field does not accept and missing required fields', () => {
    const lines = problems({
      map: {
        status: { ...minimalStatus, adjustedStatus: holding(0, 'uint16', { enum: { '0': 'GO' } }) },
        feedAndSpindle: { feedRate: holding(30, 'float32') },
      },
    });
    expect(lines).toContain('driverOptions.map.status.adjustedStatus.enum.0: found "GO"; enum values must be one of RESET, STOPPED, HOLD, RUNNING, EMERGENCY');
    expect(lines).toContain('driverOptions.map.feedAndSpindle.feedOverride: found nothing; feedOverride is required: a register item or a constant { value }');
  });

  it('rejects overlapping items and items past the last address', () => {
    const lines = problems({
      map: {
        status: minimalStatus,
        count: { partCount: holding(0, 'uint32'), partsTotal: holding(65_535, 'uint32') },
      },
    });
    expect(lines).toContain('driverOptions.map.count.partCount.address: found 0; holding 0 overlaps status.adjustedStatus (holding 0..0); each register may feed one item');
    expect(lines).toContain('driverOptions.map.count.partsTotal.address: found 65535; the item spans 2 from 65535, past the last address 65535');
  });

  it('rejects an item longer than one read may carry', () => {
    expect(problems({ maxRegistersPerRead: 4, map: { status: { ...minimalStatus, program: holding(10, 'string', { length: 8 }) } } })).toEqual([
      'driverOptions.map.status.program.length: found 8; the item spans 8 registers, more than one read carries (maxRegistersPerRead 4)',
    ]);
  });

  it('needs a source for the alarm level of a status section', () => {
    expect(problems({ map: { status: { adjustedStatus: minimalStatus.adjustedStatus } } })[0]).toMatch(
      /^driverOptions\.map\.status: found .*; status needs alarmLevel, alarmStatus or an alarms section/,
    );
  });

  it('declares only the families its map serves and rejects the others by name', async () => {
    const client = modbusClient(1, { map: { status: minimalStatus, toolNumber: { toolNumber: holding(5, 'uint16') } } });
    expect([...client.families].sort()).toEqual(['status', 'toolNumber']);
    const error = await rejection(client.read('count'));
    expect(error.errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    expect(error.message).toContain("driver 'modbus' does not support item family 'count'");
    expect((await rejection(client.downloadProgram())).errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    const defaults = modbusClient(1, { unitId: 3 });
    expect([...defaults.families].sort()).toEqual(['alarm', 'count', 'feedAndSpindle', 'load', 'position', 'status', 'timeData', 'toolNumber']);
    expect((await rejection(defaults.read('toolLife'))).errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
  });
});
