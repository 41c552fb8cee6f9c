/**
 * The latest value of every mapped item, as received: a message on a mapped
 * topic is decoded (JSON, or the plain text when it is not JSON), each item
 * is picked by its path, mapped and coerced, and stored with the time it
 * arrived. A value that does not fit is stored as a problem, so a read can
 * say what was wrong instead of serving the previous value.
 */
import { LIST_ITEMS, SCALAR_ITEMS, mapAndCoerce, type ItemKind, type ItemValue, type ListItem, type ScalarItem } from './items.js';
import type { MqttTopic } from './options.js';
import { parsePath, resolveTopic, topicMatches, valueAtPath } from './topics.js';

/** Where a stored value came from and how long it stays current. */
export interface SlotOrigin {
  /** The topic the message arrived on. */
  topic: string;
  /** Payload path of the item, for messages about it. */
  path: string;
  receivedAt: number;
  /** Age after which the value is stale; 0 means never. */
  staleAfterMs: number;
}

export type Slot<T> = SlotOrigin & ({ ok: true; value: T; raw: unknown } | { ok: false; problem: string });

export type ListElement = Record<string, ItemValue>;

interface ScalarBinding {
  key: ScalarItem;
  path: string;
  keys: Array<string | number>;
  kind: ItemKind;
  map: Readonly<Record<string, ItemValue>> | undefined;
  scale: number | undefined;
}

interface ListBinding {
  key: ListItem;
  path: string;
  keys: Array<string | number>;
  fields: Array<{ name: string; keys: Array<string | number>; kind: ItemKind; optional: boolean; map: Readonly<Record<string, ItemValue>> | undefined }>;
}

interface TopicBinding {
  /** The subscription filter, placeholders resolved. */
  filter: string;
  staleAfterMs: number;
  scalars: ScalarBinding[];
  lists: ListBinding[];
}

const NOT_JSON = Symbol('not JSON');

function decode(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}

export class ValueStore {
  /** Subscription filters of the mapped topics. */
  readonly filters: readonly string[];
  /** Items and lists some topic maps. */
  readonly mapped: ReadonlySet<ScalarItem | ListItem>;
  private readonly bindings: TopicBinding[];
  private readonly scalars = new Map<ScalarItem, Slot<ItemValue>>();
  private readonly lists = new Map<ListItem, Slot<ListElement[]>>();
  /** When each active alarm code was first received, for alarms whose payload carries no `since`. */
  private readonly alarmFirstSeen = new Map<string, number>();

  constructor(topics: readonly MqttTopic[], machineID: string, inactivityTimeoutMs: number) {
    this.bindings = topics.map((entry) => ({
      filter: resolveTopic(entry.topic, machineID),
      staleAfterMs: entry.inactivityTimeoutMs ?? inactivityTimeoutMs,
      scalars: Object.entries(entry.items).flatMap(([key, spec]) =>
        spec ? [{ key: key as ScalarItem, path: spec.path, keys: parsePath(spec.path), kind: SCALAR_ITEMS[key as ScalarItem], map: spec.map, scale: spec.scale }] : [],
      ),
      lists: Object.entries(entry.lists).flatMap(([key, spec]) => {
        if (!spec) return [];
        const elementFields = LIST_ITEMS[key as ListItem] as Record<string, { kind: ItemKind; optional: boolean }>;
        const fields = Object.entries(elementFields).map(([name, field]) => ({
          name,
          keys: parsePath(spec.fields?.[name] ?? name),
          kind: field.kind,
          optional: field.optional,
          map: spec.map?.[name],
        }));
        return [{ key: key as ListItem, path: spec.path, keys: parsePath(spec.path), fields }];
      }),
    }));
    this.filters = [...new Set(this.bindings.map((b) => b.filter))];
    this.mapped = new Set(this.bindings.flatMap((b) => [...b.scalars.map((s) => s.key), ...b.lists.map((l) => l.key)]));
  }

  /** Stores what a message on `topic` carries; returns whether any mapped topic matched. */
  ingest(topic: string, payload: Buffer, now: number): boolean {
    let matched = false;
    let document: unknown;
    let text: string | undefined;
    for (const binding of this.bindings) {
      if (!topicMatches(binding.filter, topic)) continue;
      if (text === undefined) {
        text = payload.toString('utf8');
        document = decode(text);
      }
      matched = true;
      for (const scalar of binding.scalars) this.storeScalar(binding, scalar, topic, text, document, now);
      for (const list of binding.lists) this.storeList(binding, list, topic, text, document, now);
    }
    return matched;
  }

  scalar(key: ScalarItem): Slot<ItemValue> | undefined {
    return this.scalars.get(key);
  }

  list(key: ListItem): Slot<ListElement[]> | undefined {
    return this.lists.get(key);
  }

  /** Picks the value at `keys`; undefined when this message does not carry it (absent or null). */
  private pick(keys: ReadonlyArray<string | number>, text: string, document: unknown): { value: unknown } | { problem: string } | undefined {
    if (keys.length === 0) return { value: document === NOT_JSON ? text.trim() : document };
    if (document === NOT_JSON) return { problem: 'the payload is not JSON, so a path cannot pick a value from it' };
    const value = valueAtPath(document, keys);
    return value === undefined || value === null ? undefined : { value };
  }

  private storeScalar(binding: TopicBinding, scalar: ScalarBinding, topic: string, text: string, document: unknown, now: number): void {
    const picked = this.pick(scalar.keys, text, document);
    if (picked === undefined) return;
    const origin: SlotOrigin = { topic, path: scalar.path, receivedAt: now, staleAfterMs: binding.staleAfterMs };
    if ('problem' in picked) {
      this.scalars.set(scalar.key, { ...origin, ok: false, problem: picked.problem });
      return;
    }
    const coerced = mapAndCoerce(scalar.kind, picked.value, scalar.map);
    if (!coerced.ok) {
      this.scalars.set(scalar.key, { ...origin, ok: false, problem: coerced.problem });
      return;
    }
    const value = scalar.scale !== undefined && typeof coerced.value === 'number' ? coerced.value * scalar.scale : coerced.value;
    this.scalars.set(scalar.key, { ...origin, ok: true, value, raw: picked.value });
  }

  private storeList(binding: TopicBinding, list: ListBinding, topic: string, text: string, document: unknown, now: number): void {
    const picked = this.pick(list.keys, text, document);
    if (picked === undefined) return;
    const origin: SlotOrigin = { topic, path: list.path, receivedAt: now, staleAfterMs: binding.staleAfterMs };
    const fail = (problem: string) => this.lists.set(list.key, { ...origin, ok: false, problem });
    if ('problem' in picked) return void fail(picked.problem);
    if (!Array.isArray(picked.value)) return void fail('the value is not a JSON array');
    const elements: ListElement[] = [];
    for (const [i, item] of picked.value.entries()) {
      const element: ListElement = {};
      for (const field of list.fields) {
        const raw = valueAtPath(item, field.keys);
        if (raw === undefined || raw === null) {
          if (field.optional) continue;
          return void fail(`element ${i} has no '${field.name}'`);
        }
        const coerced = mapAndCoerce(field.kind, raw, field.map);
        if (!coerced.ok) return void fail(`element ${i} field '${field.name}': ${coerced.problem}`);
        element[field.name] = coerced.value;
      }
      elements.push(element);
    }
    if (list.key === 'alarm') this.fillAlarmSince(elements, now);
    this.lists.set(list.key, { ...origin, ok: true, value: elements, raw: picked.value });
  }

  /** Alarms without `since` get the time they were first received, kept while they stay active. */
  private fillAlarmSince(alarms: ListElement[], now: number): void {
    const active = new Set(alarms.map((alarm) => String(alarm.code)));
    for (const code of [...this.alarmFirstSeen.keys()]) if (!active.has(code)) this.alarmFirstSeen.delete(code);
    for (const alarm of alarms) {
      const code = String(alarm.code);
      if (!this.alarmFirstSeen.has(code)) this.alarmFirstSeen.set(code, typeof alarm.since === 'number' ? alarm.since : now);
      alarm.since ??= this.alarmFirstSeen.get(code) ?? now;
    }
  }
}
