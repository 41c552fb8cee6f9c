/**
 * How a config file's fleet meets the stored one. The config is declarative
 * for the machines and groups it names: each is added when absent and
 * replaced when the stored one differs (so an API edit of a machine the
 * config names lasts until the next start). Machines and groups stored but
 * not named by the config (added through the API, or by an earlier config)
 * are kept and reported, never deleted. A credential the config entry leaves
 * out keeps its stored value, so passwords can be set through the API only
 * and stay out of the file.
 */
import { basename } from 'node:path';
import { WRITE_ONLY_MACHINE_FIELDS, type GroupConfig, type MachineConfig } from '../machine-config.js';

/** The fleet a config file names, and which file it came from. */
export interface ConfigFleet {
  /** The config file's path, or a label such as `(inline)`. */
  source: string;
  machines: readonly MachineConfig[];
  groups: readonly GroupConfig[];
}

/** What applying the config does to one kind of entity. */
export interface FleetChanges<T> {
  added: T[];
  /** Replaced entries and the top-level fields that differ (credential fields by name only). */
  updated: { config: T; fields: string[] }[];
  unchanged: string[];
  /** Stored IDs the config does not name; they stay as they are. */
  kept: string[];
}

export interface ConfigFleetPlan {
  machines: FleetChanges<MachineConfig>;
  groups: FleetChanges<GroupConfig>;
}

/** JSON with object keys sorted, so two equal configs compare equal whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

function changedFields(stored: object, wanted: object): string[] {
  const a = stored as Record<string, unknown>;
  const b = wanted as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return keys.filter((k) => canonical(a[k]) !== canonical(b[k]));
}

function plan<T>(stored: ReadonlyMap<string, T>, named: readonly T[], idOf: (item: T) => string, wanted: (item: T, current: T | undefined) => T, extraChanges: (id: string) => string[]): FleetChanges<T> {
  const changes: FleetChanges<T> = { added: [], updated: [], unchanged: [], kept: [] };
  const names = new Set<string>();
  for (const item of named) {
    const id = idOf(item);
    names.add(id);
    const current = stored.get(id);
    const next = wanted(item, current);
    if (!current) {
      changes.added.push(next);
      continue;
    }
    const fields = [...new Set([...changedFields(current as object, next as object), ...extraChanges(id)])];
    if (fields.length) changes.updated.push({ config: next, fields });
    else changes.unchanged.push(id);
  }
  for (const id of stored.keys()) if (!names.has(id)) changes.kept.push(id);
  return changes;
}

/**
 * Decides what the config changes. `unreadable` holds `machineID/field` of stored
 * credentials that did not decrypt; the config's value replaces them.
 */
export function planConfigFleet(
  stored: { machines: ReadonlyMap<string, MachineConfig>; groups: ReadonlyMap<string, GroupConfig> },
  config: ConfigFleet,
  unreadable: ReadonlySet<string> = new Set(),
): ConfigFleetPlan {
  const machines = plan(
    stored.machines,
    config.machines,
    (m) => m.machineID,
    (m, current) => {
      const next: MachineConfig = { ...m };
      for (const field of WRITE_ONLY_MACHINE_FIELDS) {
        if (next[field] === undefined && current?.[field] !== undefined) next[field] = current[field];
      }
      return next;
    },
    (id) => WRITE_ONLY_MACHINE_FIELDS.filter((field) => unreadable.has(`${id}/${field}`)),
  );
  const groups = plan(stored.groups, config.groups, (g) => g.groupID, (g) => g, () => []);
  return { machines, groups };
}

const SHOWN_IDS = 10;

function list(ids: readonly string[]): string {
  const shown = ids.slice(0, SHOWN_IDS).join(', ');
  return ids.length > SHOWN_IDS ? `${shown} and ${ids.length - SHOWN_IDS} more` : shown;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function describeChanges<T>(changes: FleetChanges<T>, idOf: (item: T) => string, word: string): string {
  const added = changes.added.length ? `added ${plural(changes.added.length, word)} (${list(changes.added.map(idOf))})` : `added 0 ${word}s`;
  const updatedItems = changes.updated.map((u) => `${idOf(u.config)}: ${u.fields.join(', ')}`);
  const updated = changes.updated.length
    ? `updated ${changes.updated.length} (${updatedItems.slice(0, SHOWN_IDS).join('; ')}${updatedItems.length > SHOWN_IDS ? `; and ${updatedItems.length - SHOWN_IDS} more` : ''})`
    : 'updated 0';
  return `${added}, ${updated}, unchanged ${changes.unchanged.length}`;
}

/** One line per outcome, for the log and the start-up banner; every kept entry is named. */
export function describeConfigFleet(result: ConfigFleetPlan, source: string): string[] {
  const name = source.startsWith('(') ? source : basename(source);
  const { machines, groups } = result;
  const named = machines.added.length + machines.updated.length + machines.unchanged.length;
  const namedGroups = groups.added.length + groups.updated.length + groups.unchanged.length;
  const lines: string[] = [];
  if (named === 0 && namedGroups === 0) {
    lines.push(`config ${name} names no machines or groups: the ${plural(machines.kept.length, 'stored machine')} and ${plural(groups.kept.length, 'group')} are used as they are`);
    return lines;
  }
  lines.push(`config ${name}: ${describeChanges(machines, (m) => m.machineID, 'machine')}`);
  if (namedGroups) lines.push(`config ${name}: ${describeChanges(groups, (g) => g.groupID, 'group')}`);
  if (machines.kept.length) lines.push(`kept ${plural(machines.kept.length, 'machine')} not in the config: ${list(machines.kept)}`);
  if (groups.kept.length) lines.push(`kept ${plural(groups.kept.length, 'group')} not in the config: ${list(groups.kept)}`);
  return lines;
}
