/**
 * What the XML and JSON documents share: the header's facts, the element
 * name of each data item's observations, the order observations are printed
 * in (by device, component, category, data item and sequence, as cppagent
 * sorts them), the tool life assets, and the text rule (characters XML 1.0
 * cannot carry are replaced, so a driver's text never breaks a document).
 */
import { comparePrinting, type ComponentDef, type DeviceModel } from './model.js';
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

/** A document as UTF-8 chunks, sent one after the other. */
export type Chunks = readonly Buffer[];

/**
 * Chunks of about this many bytes: a document of megabytes is never joined
 * into one buffer. A buffer of megabytes is a fresh mapping of memory with
 * the allocator settings the gateway runs with (docs/operations.md): 11 ms
 * for the 3 MiB of /current of a thousand machines, where copying its parts
 * into chunks costs 1.
 */
const CHUNK_BYTES = 64 * 1024;

/**
 * The document of `frame` around `parts` (each a DeviceStream, as UTF-8),
 * `separator` between them, as chunks of about CHUNK_BYTES: the parts were
 * encoded once when written, so a request only copies them.
 */
export function framed(frame: DocumentFrame, parts: readonly Buffer[], separator?: Buffer): Chunks {
  const chunks: Buffer[] = [];
  let group: Buffer[] = [];
  let size = 0;
  const add = (b: Buffer) => {
    group.push(b);
    size += b.length;
    if (size >= CHUNK_BYTES) {
      chunks.push(group.length === 1 ? b : Buffer.concat(group, size));
      group = [];
      size = 0;
    }
  };
  add(Buffer.from(frame.head));
  for (let i = 0; i < parts.length; i++) {
    if (separator && i > 0) add(separator);
    add(parts[i]!);
  }
  add(Buffer.from(frame.tail));
  if (group.length) chunks.push(Buffer.concat(group, size));
  return chunks;
}

/** A document's bytes: its text's in UTF-8, or its chunks'. */
export function byteLength(document: string | Chunks): number {
  if (typeof document === 'string') return Buffer.byteLength(document);
  let n = 0;
  for (const c of document) n += c.length;
  return n;
}

let isoSecond = NaN;
let isoPrefix = '';
/** The last unix ms with a 4-digit year (9999-12-31T23:59:59.999Z). */
const LAST_PLAIN_YEAR_MS = 253_402_300_799_999;

/**
 * ISO-8601 UTC with milliseconds, as observations carry their timestamps.
 * The text up to the second is kept from the last call: observations come
 * in runs of the same second, and this is written for each of them.
 */
export function isoTime(ms: number): string {
  if (!Number.isInteger(ms) || ms < 0 || ms > LAST_PLAIN_YEAR_MS) return new Date(ms).toISOString();
  const milli = ms % 1000;
  const second = ms - milli;
  if (second !== isoSecond) {
    isoPrefix = new Date(second).toISOString().slice(0, 20);
    isoSecond = second;
  }
  return `${isoPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
}

/** The creation time of a document: now, in whole seconds as cppagent writes it. */
export function creationTime(now: number): string {
  return `${new Date(now).toISOString().slice(0, 19)}Z`;
}

// Control characters other than tab, line feed and carriage return, lone surrogates and U+FFFE/U+FFFF are not XML 1.0 characters.
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** `text` with the characters XML cannot carry replaced by U+FFFD (the XML builder escapes it). */
export function xmlText(text: string): string {
  return text.replace(NOT_XML, '\uFFFD');
}

const ESCAPED = new RegExp(`[&<>]|${NOT_XML.source}`, 'g');
const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };

/**
 * `text` escaped for XML text and attribute values in one pass: `&`, `<`
 * and `>` as entities, the characters XML cannot carry replaced by U+FFFD.
 * For the observations' builder, whose own entity pass (five regular
 * expressions over every value) is off; it still escapes the quotes of
 * attribute values.
 */
export function xmlEscaped(text: string): string {
  return text.replace(ESCAPED, (c) => ENTITY[c] ?? '\uFFFD');
}

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

/** Sorts observations in place in the printed order: by data item (its rank in the model, when it has one), then sequence. */
export function sortForPrinting(observations: Served[]): Served[] {
  return observations.sort((a, b) => {
    const ra = a.def.rank;
    const rb = b.def.rank;
    const byItem = ra !== undefined && rb !== undefined ? ra - rb : comparePrinting(a.def, b.def);
    return byItem !== 0 ? byItem : a.o.seq - b.o.seq;
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
