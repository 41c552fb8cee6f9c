/**
 * Coalescing: the items a family needs become as few read requests as the
 * limits allow. Items of one function whose addresses are at most `maxGap`
 * apart share a request, as long as the request stays within `maxLength`
 * registers (or bits). Plans are made once per map and family, not per read.
 */
import { BIT_FUNCTIONS, type ModbusFunction, type RegisterItem } from './register-items.js';
import { dotted, type LocatedItem } from './register-map.js';

export interface CoalesceLimits {
  maxGapRegisters: number;
  maxRegistersPerRead: number;
  maxGapBits: number;
  maxBitsPerRead: number;
}

/** One read request and the items it answers, each with its offset into the response. */
export interface ReadRequest {
  function: ModbusFunction;
  address: number;
  /** Registers or bits to read. */
  count: number;
  items: { path: string; item: RegisterItem; offset: number }[];
}

const FUNCTION_ORDER: readonly ModbusFunction[] = ['holding', 'input', 'discreteInputs', 'coils'];

/** Plans the requests that read `items`; items are keyed in the result by their dotted path. */
export function planReads(items: readonly LocatedItem[], limits: CoalesceLimits): ReadRequest[] {
  const requests: ReadRequest[] = [];
  for (const fn of FUNCTION_ORDER) {
    const bits = BIT_FUNCTIONS.has(fn);
    const maxGap = bits ? limits.maxGapBits : limits.maxGapRegisters;
    const maxLength = bits ? limits.maxBitsPerRead : limits.maxRegistersPerRead;
    const ofFunction = items.filter((located) => located.item.function === fn).sort((x, y) => x.item.address - y.item.address);
    let current: ReadRequest | undefined;
    for (const { path, item } of ofFunction) {
      const end = item.address + item.width;
      const fits =
        current !== undefined &&
        item.address - (current.address + current.count) <= maxGap &&
        end - current.address <= maxLength;
      if (!current || !fits) {
        current = { function: fn, address: item.address, count: item.width, items: [] };
        requests.push(current);
      }
      current.count = Math.max(current.count, end - current.address);
      current.items.push({ path: dotted(path), item, offset: item.address - current.address });
    }
  }
  return requests;
}
