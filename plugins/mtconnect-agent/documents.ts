/**
 * What the XML and JSON documents share: the header's facts, the element
 * name of each data item's observations, the order observations are printed
 * in (by device, component, category, data item and sequence, as cppagent
 * sorts them), the tool life assets, and the text rule (characters XML 1.0
 * cannot carry are replaced, so a driver's text never breaks a document).
 */
import type { ComponentDef, DataItemDef, DeviceModel } from './model.js';
import type { Served } from './served.js';

/** The MTConnect version of the documents and their schemas. */
export const SCHEMA_VERSION = '2.7';

/** What every document's header says besides its own counts. */
export interface HeaderFacts {
  instanceId: number;
  /** The agent's software version. */
  version: string;
  sender: string;
  /** When the device model last changed, unix ms. */
  deviceModelChangeTime: number;
}

/** A document's text before and after the parts written apart (DeviceStream elements, kept per device). */
export interface DocumentFrame {
  head: string;
  tail: string;
}

/**
 * The document of `frame` around `parts`, `separator` between them, as one
 * buffer: the parts were encoded once when written, so a large document is
 * copied once and its text never encoded again.
 */
export function framed(frame: DocumentFrame, parts: readonly Buffer[], separator?: Buffer): Buffer {
  const chunks: Buffer[] = [Buffer.from(frame.head)];
  for (let i = 0; i < parts.length; i++) {
    if (separator && i > 0) chunks.push(separator);
    chunks.push(parts[i]!);
  }
  chunks.push(Buffer.from(frame.tail));
  return Buffer.concat(chunks);
}

/** ISO-8601 UTC with milliseconds, as observations carry their timestamps. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}

/** The creation time of a document: now, in whole seconds as cppagent writes it. */
export function creationTime(now: number): string {
  return `${new Date(now).toISOString().slice(0, 19)}Z`;
}

// Control characters other than tab, line feed and carriage return, lone surrogates and U+FFFE/U+FFFF are not XML 1.0 characters.
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` with the characters XML cannot carry replaced by U+FFFD. */
export function xmlText(text: string): string {
  return text.replace(NOT_XML, '\uFFFD');
}

const CATEGORY_ORDER = { SAMPLE: 0, EVENT: 1, CONDITION: 2 } as const;

/** An observation's element name: the condition's level, else the data item's type in CamelCase (EXECUTION → Execution). */
export function elementName(served: Served): string {
  if (served.def.category === 'CONDITION') return served.o.level ?? 'Unavailable';
  return camel(served.def.type);
}

const camelCache = new Map<string, string>();

/** PART_COUNT → PartCount. */
export function camel(type: string): string {
  let name = camelCache.get(type);
  if (!name) {
    name = type
      .toLowerCase()
      .split('_')
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join('');
    camelCache.set(type, name);
  }
  return name;
}

/** The component stream an observation goes to: the data item's component (or device). */
export function componentOf(def: DataItemDef): ComponentDef {
  return def.parent;
}

/** Sorts observations in place in the printed order. */
export function sortForPrinting(observations: Served[]): Served[] {
  return observations.sort((a, b) => {
    const da = a.def.parent.device.id;
    const db = b.def.parent.device.id;
    if (da !== db) return da < db ? -1 : 1;
    const ca = a.def.parent.id;
    const cb = b.def.parent.id;
    if (ca !== cb) return ca < cb ? -1 : 1;
    const ka = CATEGORY_ORDER[a.def.category];
    const kb = CATEGORY_ORDER[b.def.category];
    if (ka !== kb) return ka - kb;
    if (a.def.id !== b.def.id) return a.def.id < b.def.id ? -1 : 1;
    return a.o.seq - b.o.seq;
  });
}

/** Consecutive runs of `items` with the same key, in order. */
export function runs<T, K>(items: readonly T[], key: (item: T) => K): T[][] {
  const out: T[][] = [];
  let last: K | undefined;
  for (const item of items) {
    const k = key(item);
    if (out.length === 0 || k !== last) out.push([]);
    out[out.length - 1]!.push(item);
    last = k;
  }
  return out;
}

/** A cutting tool as an asset: one tool life record of a machine. */
export interface ToolAsset {
  assetId: string;
  toolId: string;
  deviceUuid: string;
  /** When the tool life was sampled, unix ms. */
  timestamp: number;
  status: 'NEW' | 'USED' | 'EXPIRED';
  lifeType: 'PART_COUNT' | 'MINUTES';
  used: number;
  limit: number;
  group: number;
  toolNumber: number;
}

/** The device model's devices, for the probe of one device or of all. */
export function probeDevices(model: DeviceModel, device: ComponentDef | undefined): ComponentDef[] {
  return device ? [device] : model.devices;
}
