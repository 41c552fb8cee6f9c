/** The text an OPC UA value carries, whether a String or a LocalizedText: read by the address space's browse and by the readings. */
import type { DataValue } from 'node-opcua';

/** The text of a String or LocalizedText value. */
export function textOf(value: DataValue | undefined): string | undefined {
  const v: unknown = value?.value.value;
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && 'text' in v) return typeof v.text === 'string' ? v.text : undefined;
  return undefined;
}
