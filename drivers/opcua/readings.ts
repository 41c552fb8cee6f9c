/** Turning OPC UA DataValues into plain readings. */
import type { DataValue } from 'node-opcua';
import type { ConditionNodes, MachineLayout } from './address-space.js';
import { textOf } from './text-value.js';
import type { ConditionReading } from './mapping.js';

/** The number of a Good numeric value; 64-bit integers (which arrive as [high, low]) included. */
export function numberOf(dv: DataValue | undefined): number | undefined {
  if (!dv?.statusCode.isGood()) return undefined;
  const v: unknown = dv.value.value;
  if (typeof v === 'number') return v;
  if (Array.isArray(v) && v.length === 2 && typeof v[0] === 'number' && typeof v[1] === 'number') return v[0] * 2 ** 32 + v[1];
  return undefined;
}

/** The conditions of `layout` from their field values (by NodeId); a Bad field counts as absent. */
export function conditionsOf(layout: MachineLayout, byId: ReadonlyMap<string, DataValue | undefined>): ConditionReading[] {
  const good = (id: string | undefined) => {
    const value = id === undefined ? undefined : byId.get(id);
    return value?.statusCode.isGood() ? value : undefined;
  };
  return layout.conditions.map((c: ConditionNodes) => {
    const time: unknown = good(c.time)?.value.value;
    const severity: unknown = good(c.severity)?.value.value;
    return {
      code: textOf(good(c.conditionName)) || c.code,
      active: good(c.activeId)?.value.value === true,
      message: textOf(good(c.message)) ?? '',
      severity: typeof severity === 'number' ? severity : 0,
      time: time instanceof Date && time.getTime() > 0 ? time.getTime() : undefined,
    };
  });
}
