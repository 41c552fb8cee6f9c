import { describe, expect, it } from 'vitest';
import { familyPlans } from '../../../drivers/modbus/client.js';
import { DEFAULT_MAP, modbusDriver } from '../../../drivers/modbus/index.js';
import { planReads } from '../../../drivers/modbus/read-plan.js';
import { itemSchema, type RegisterItem } from '../../../drivers/modbus/register-items.js';
import type { LocatedItem } from '../../../drivers/modbus/register-map.js';

const LIMITS = { maxGapRegisters: 8, maxRegistersPerRead: 125, maxGapBits: 32, maxBitsPerRead: 2000 };

function located(name: string, fn: string, address: number, type: string, length?: number): LocatedItem {
  const item = itemSchema({ kind: type === 'string' ? 'text' : type === 'bool' ? 'boolean' : 'number' }).parse({
    function: fn, address, type, ...(length ? { length } : {}),
  }) as RegisterItem;
  return { path: [name], item };
}

const shape = (requests: ReturnType<typeof planReads>) => requests.map((r) => `${r.function}@${r.address}+${r.count}`);

describe('modbus read plans', () => {
  it('coalesces items of one function within the maximum gap, and splits beyond it', () => {
    const items = [located('a', 'holding', 0, 'uint16'), located('b', 'holding', 1, 'uint32'), located('c', 'holding', 11, 'uint16'), located('d', 'holding', 21, 'uint16')];
    expect(shape(planReads(items, LIMITS))).toEqual(['holding@0+12', 'holding@21+1']);
    expect(shape(planReads(items, { ...LIMITS, maxGapRegisters: 0 }))).toEqual(['holding@0+3', 'holding@11+1', 'holding@21+1']);
    expect(shape(planReads(items, { ...LIMITS, maxGapRegisters: 9 }))).toEqual(['holding@0+22']);
  });

  it('keeps every request within the maximum length and gives each item its offset', () => {
    const items = [located('a', 'input', 0, 'uint32'), located('b', 'input', 2, 'string', 4), located('c', 'input', 6, 'uint32')];
    const plan = planReads(items, { ...LIMITS, maxRegistersPerRead: 6 });
    expect(shape(plan)).toEqual(['input@0+6', 'input@6+2']);
    expect(plan[0]?.items.map((i) => [i.path, i.offset])).toEqual([['a', 0], ['b', 2]]);
  });

  it('never mixes functions, and plans bits with the bit limits', () => {
    const items = [located('h', 'holding', 0, 'uint16'), located('i', 'input', 0, 'uint16'), located('x', 'coils', 0, 'bool'), located('y', 'coils', 40, 'bool'), located('z', 'discreteInputs', 3, 'bool')];
    expect(shape(planReads(items, LIMITS))).toEqual(['holding@0+1', 'input@0+1', 'discreteInputs@3+1', 'coils@0+1', 'coils@40+1']);
    expect(shape(planReads(items, { ...LIMITS, maxGapBits: 39 }))).toContain('coils@0+41');
  });

  it('plans the default map in few requests per family, once per map', () => {
    const options = modbusDriver.configSchema.parse({ unitId: 3 });
    const plans = familyPlans(options.map, options);
    expect(Object.fromEntries(Object.entries(plans).map(([family, plan]) => [family, shape(plan)]))).toEqual({
      status: ['holding@0+28', 'discreteInputs@0+2'],
      alarm: ['holding@100+92'],
      feedAndSpindle: ['input@0+7'],
      toolNumber: ['holding@4+2'],
      timeData: ['input@10+8'],
      count: ['input@20+16'],
      position: ['input@100+40'],
      load: ['input@200+10'],
    });
    expect(familyPlans(DEFAULT_MAP, options)).toBe(plans);
  });
});
