/** Turning OPC UA DataValues into plain readings. */
import type { DataValue } from 'node-opcua';
import type { ConditionNodes, MachineLayout } from './address-space.js';
import type { ConditionReading } from './mapping.js';

/** The text of a String or LocalizedText value. */
export function textOf(value: DataValue | undefined): string | undefined {
  const v: unknown = value?.value.value;
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && 'text' in v) return typeof v.text === 'string' ? v.text : undefined;
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
