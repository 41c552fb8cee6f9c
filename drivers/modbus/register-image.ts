/**
 * A SimulatedMachine seen through a register map: the words (or bits) a
 * device laid out as the map says would hold at this moment. The Modbus
 * simulator answers from it; only the families a request touches are read
 * from the model.
 */
import type { SimulatedMachine } from '../simulator/model.js';
import { encodeRegisters, type DecodedValue } from './codec.js';
import type { ModbusFunction, RegisterItem } from './register-items.js';
import { sectionItems, type RegisterMap } from './register-map.js';

type Section = keyof RegisterMap;

interface ImageItem {
  section: Section;
  slot: number | undefined;
  key: string;
  item: RegisterItem;
  /** Label → code, for enumerated items. */
  codes?: ReadonlyMap<string, number>;
}

/** The model reading behind each section. */
const READINGS: Record<Section, (machine: SimulatedMachine) => unknown> = {
  status: (m) => m.status(),
  alarms: (m) => m.alarms(),
  feedAndSpindle: (m) => m.feedAndSpindle(),
  toolNumber: (m) => m.toolNumber(),
  timeData: (m) => m.timeData(),
  count: (m) => m.count(),
  axes: (m) => m.positions(),
  loads: (m) => m.loads(),
};

/** Slot keys whose model field is named differently. */
const MODEL_KEY: Partial<Record<Section, Record<string, string>>> = { axes: { name: 'axis' } };

/** An address outside every item of a function, past the last one; the device answers "illegal data address". */
export class IllegalAddressError extends Error {
  readonly modbusErrorCode = 0x02;
}

export class RegisterImage {
  private readonly byFunction = new Map<ModbusFunction, ImageItem[]>();
  private readonly lastAddress = new Map<ModbusFunction, number>();

  constructor(map: RegisterMap) {
    for (const section of Object.keys(map) as Section[]) {
      for (const { path, item } of sectionItems(map, section)) {
        const slot = typeof path[1] === 'number' ? path[1] : undefined;
        const key = String(path[path.length - 1]);
        const codes = item.enumeration ? new Map([...item.enumeration].map(([code, label]) => [label, code])) : undefined;
        const list = this.byFunction.get(item.function) ?? [];
        list.push({ section, slot, key, item, ...(codes ? { codes } : {}) });
        this.byFunction.set(item.function, list);
        this.lastAddress.set(item.function, Math.max(this.lastAddress.get(item.function) ?? 0, item.address + item.width - 1));
      }
    }
    for (const list of this.byFunction.values()) list.sort((x, y) => x.item.address - y.item.address);
  }

  /** `count` register words from `address`; unmapped registers read 0. */
  registers(machine: SimulatedMachine, fn: 'holding' | 'input', address: number, count: number): number[] {
    const words = new Array<number>(count).fill(0);
    this.fill(machine, fn, address, count, (item, value) => {
      const encoded = encodeRegisters(value, item.item);
      encoded.forEach((word, i) => {
        const at = item.item.address + i - address;
        if (at >= 0 && at < count) words[at] = word;
      });
    });
    return words;
  }

  /** `count` bits from `address`; unmapped bits read false. */
  bits(machine: SimulatedMachine, fn: 'coils' | 'discreteInputs', address: number, count: number): boolean[] {
    const bits = new Array<boolean>(count).fill(false);
    this.fill(machine, fn, address, count, (item, value) => {
      bits[item.item.address - address] = value === true || (typeof value === 'number' && value !== 0);
    });
    return bits;
  }

  private fill(machine: SimulatedMachine, fn: ModbusFunction, address: number, count: number, put: (item: ImageItem, value: DecodedValue) => void): void {
    if (address + count - 1 > (this.lastAddress.get(fn) ?? -1)) throw new IllegalAddressError(`${fn} ${address}+${count} is past the last mapped address`);
    const readings = new Map<Section, unknown>();
    for (const entry of this.byFunction.get(fn) ?? []) {
      const { item } = entry;
      if (item.address + item.width <= address) continue;
      if (item.address >= address + count) break;
      let reading = readings.get(entry.section);
      if (reading === undefined) readings.set(entry.section, (reading = READINGS[entry.section](machine)));
      const holder = entry.slot === undefined ? reading : (reading as unknown[])[entry.slot];
      const raw = (holder as Record<string, unknown> | undefined)?.[MODEL_KEY[entry.section]?.[entry.key] ?? entry.key];
      put(entry, encodeValue(entry, raw));
    }
  }
}

/** The value to encode: a code for enumerated items, 0 or '' for what the model does not have (an empty slot). */
function encodeValue(entry: ImageItem, raw: unknown): DecodedValue {
  if (entry.codes) return typeof raw === 'string' ? (entry.codes.get(raw) ?? 0) : 0;
  if (raw === undefined || raw === null) return entry.item.type === 'string' ? '' : 0;
  return typeof raw === 'number' || typeof raw === 'boolean' || typeof raw === 'string' ? raw : String(raw);
}
