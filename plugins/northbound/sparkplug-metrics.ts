/**
 * A history row as Sparkplug B metrics. A metric is named
 * `{class}/{field}` (a folder per data class, as Ignition shows `/`), its
 * type fixed for the whole session as the birth declared it: the fields the
 * gateway writes have their types here; any other field (or a class an
 * older version wrote) is a String holding the value's JSON. Numbers are
 * Double, times DateTime (unix ms). `History/seq` carries the row's history
 * sequence number, so a host can drop repeats as a UNS subscriber does.
 */
import { classLevel } from './topics.js';

export type MetricType = 'String' | 'Boolean' | 'Double' | 'DateTime' | 'UInt64';

/** One metric value as the payload library takes it (`null` is sent as is_null). */
export interface MetricValue {
  name: string;
  type: MetricType;
  value: string | number | boolean | null;
}

/** The metric carrying a row's history sequence number. */
export const SEQ_METRIC = 'History/seq';

/** The fields the gateway's machine actors write, by class, with their metric types (core/roles/gateway/fleet/machine-history.ts). */
export const METRIC_CATALOG: Readonly<Record<string, Readonly<Record<string, MetricType>>>> = {
  CNCStatus: {
    cncStatus: 'String', adjustedStatus: 'String', alarmStatus: 'Boolean', alarmLevel: 'String', mode: 'String',
    programStatus: 'String', emergency: 'Boolean', program: 'String', time: 'DateTime',
  },
  Motion: { axes: 'String', spindleSpeed: 'Double', spindleLoad: 'Double', toolNumber: 'Double' },
  AlarmLog: { event: 'String', code: 'String', message: 'String', level: 'String', since: 'DateTime' },
  AlarmHistory: { code: 'String', message: 'String', level: 'String', start: 'DateTime', end: 'DateTime', durationSec: 'Double' },
  Count: { delta: 'Double', partCount: 'Double', partsTotal: 'Double', lastCycleTime: 'Double', program: 'String' },
  State: { state: 'String', reason: 'String', connection: 'String' },
  Heartbeat: { state: 'String', connection: 'String', statusStale: 'Boolean' },
};

/** Every metric of the catalog, as a device's birth declares them before any row. */
export function catalogMetrics(): { name: string; type: MetricType }[] {
  const out = [{ name: SEQ_METRIC, type: 'UInt64' as MetricType }];
  for (const [cls, fields] of Object.entries(METRIC_CATALOG)) for (const [field, type] of Object.entries(fields)) out.push({ name: `${cls}/${field}`, type });
  return out;
}

/** A value as a metric of `type`; null when it is not one (a String takes anything, as its JSON). */
function asType(value: unknown, type: MetricType): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  switch (type) {
    case 'String':
      return typeof value === 'string' ? value : JSON.stringify(value);
    case 'Boolean':
      return typeof value === 'boolean' ? value : null;
    default:
      return typeof value === 'number' && Number.isFinite(value) && (type === 'Double' || value >= 0) ? value : null;
  }
}

/** The metrics of a row's data (its stored JSON text): a field of the catalog with its type, any other one as String. */
export function rowMetrics(cls: string, data: string): MetricValue[] {
  const folder = classLevel(cls);
  const known = METRIC_CATALOG[cls];
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    return [{ name: `${folder}/value`, type: 'String', value: data }];
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return [{ name: `${folder}/value`, type: 'String', value: asType(parsed, 'String') }];
  const out: MetricValue[] = [];
  for (const [field, value] of Object.entries(parsed as Record<string, unknown>)) {
    const type = known?.[field] ?? 'String';
    out.push({ name: `${folder}/${field.slice(0, 128)}`, type, value: asType(value, type) });
  }
  return out;
}
