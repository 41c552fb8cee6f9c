/**
 * A plant-side subscriber for the northbound tests: it records every message
 * a broker delivers, and checks what a consumer needs: after dropping
 * repeats by `seq`, every history row exactly once and each machine's rows
 * in order (UNS), and the Sparkplug session rules (births before data,
 * `seq` one more each message, bdSeq of the NBIRTH and NDEATH matching).
 */
import { connectAsync, type IClientOptions, type MqttClient } from 'mqtt';
import { get } from 'sparkplug-payload';
import type { UPayload } from 'sparkplug-payload/lib/sparkplugbpayload.js';
import type { SequencedRow } from '../../../core/roles/gateway/history/sequence.js';

const sparkplug = get('spBv1.0')!;

export interface Recorded {
  topic: string;
  payload: Buffer;
  retain: boolean;
  /** The broker sent it again (a QoS 1 message it had in flight to this subscriber). */
  dup: boolean;
}

export interface Subscriber {
  client: MqttClient;
  messages: Recorded[];
  close(): Promise<void>;
}

/** Subscribes to `topics` at QoS 1 and records what arrives, in order. */
export async function subscribe(url: string, topics: string[], options: IClientOptions = {}): Promise<Subscriber> {
  const client = await connectAsync(url, { protocolVersion: 4, reconnectPeriod: 100, ...options });
  const messages: Recorded[] = [];
  client.on('message', (topic, payload, packet) => messages.push({ topic, payload, retain: packet.retain, dup: packet.dup }));
  await client.subscribeAsync(topics, { qos: 1 });
  return { client, messages, close: () => client.endAsync(true) };
}

/** A UNS row message as a subscriber reads it. */
export interface UnsRow {
  seq: number;
  ts: number;
  machineID: string;
  class: string;
  data: unknown;
  state: string | null;
  reason: string | null;
}

/** The row messages under `root` (not the retained state or the gateway status), in arrival order. */
export function unsRows(messages: readonly Recorded[], root: string): UnsRow[] {
  return messages
    .filter((m) => m.topic.startsWith(`${root}/`) && !m.topic.startsWith(`${root}/_gateway/`) && !m.topic.endsWith('/state'))
    .map((m) => JSON.parse(m.payload.toString('utf8')) as UnsRow);
}

/** What a subscriber that drops repeats by seq has, against the history. */
export interface Delivery {
  /** History rows never received. */
  missing: number[];
  /** Received seqs the history does not hold. */
  unknown: number[];
  /** Repeats dropped. */
  repeats: number;
  /** Rows received out of their machine's order (after dropping repeats). */
  outOfOrder: string[];
  /** Received rows whose fields differ from the history's. */
  different: number[];
}

/** Compares received rows with the history's (the seqs the history holds). */
export function delivery(received: readonly { seq: number; machineID: string; class?: string; ts?: number; data?: unknown }[], history: readonly SequencedRow[]): Delivery {
  const bySeq = new Map(history.map((r) => [r.seq, r]));
  const seen = new Set<number>();
  const lastOfMachine = new Map<string, number>();
  const result: Delivery = { missing: [], unknown: [], repeats: 0, outOfOrder: [], different: [] };
  for (const r of received) {
    if (seen.has(r.seq)) {
      result.repeats++;
      continue;
    }
    seen.add(r.seq);
    const stored = bySeq.get(r.seq);
    if (!stored) {
      result.unknown.push(r.seq);
      continue;
    }
    if (stored.machineID !== r.machineID || (r.class !== undefined && stored.cls !== r.class) || (r.ts !== undefined && stored.ts !== r.ts) || (r.data !== undefined && JSON.stringify(JSON.parse(stored.data)) !== JSON.stringify(r.data))) result.different.push(r.seq);
    const last = lastOfMachine.get(r.machineID) ?? 0;
    if (r.seq < last) result.outOfOrder.push(`${r.machineID}: ${r.seq} after ${last}`);
    lastOfMachine.set(r.machineID, Math.max(last, r.seq));
  }
  for (const r of history) if (!seen.has(r.seq)) result.missing.push(r.seq);
  return result;
}

/** A decoded Sparkplug message. */
export interface SparkplugMessage {
  type: string;
  device?: string;
  payload: UPayload;
  /** The broker sent it again; a broken rule names it, so a failure shows whether repeats caused it. */
  dup?: boolean;
}

/** The Sparkplug messages of one edge node, decoded with sparkplug-payload (throws on one that does not decode). */
export function sparkplugMessages(messages: readonly Recorded[], groupId: string, edgeNodeId: string): SparkplugMessage[] {
  const prefix = `spBv1.0/${groupId}/`;
  return messages
    // What the edge node publishes; a host's NCMD and DCMD are not.
    .filter((m) => m.topic.startsWith(prefix) && m.topic.split('/')[3] === edgeNodeId && !/^(NCMD|DCMD)$/.test(m.topic.split('/')[2] ?? ''))
    .map((m) => {
      const [, , type, , device] = m.topic.split('/');
      return { type: type as string, ...(device ? { device } : {}), ...(m.dup ? { dup: true } : {}), payload: sparkplug.decodePayload(m.payload) };
    });
}

const num = (v: unknown): number => Number(String(v));

/**
 * The Sparkplug session rules as a host checks them, in arrival order:
 * every session starts with an NBIRTH of seq 0 whose bdSeq the session's
 * NDEATH repeats; each later message's seq is one more (255 followed by 0);
 * a device's DDATA and DDEATH come only after its DBIRTH in the session;
 * DDATA metrics have aliases and no names. Answers the broken rules.
 */
export function sparkplugRuleBreaks(decoded: readonly SparkplugMessage[]): string[] {
  const breaks: string[] = [];
  let seq: number | undefined;
  let bdSeq: number | undefined;
  const born = new Set<string>();
  decoded.forEach((m, i) => {
    const where = `message ${i} (${m.type}${m.device ? ` ${m.device}` : ''}${m.dup ? ', sent again' : ''})`;
    const metric = (name: string) => m.payload.metrics?.find((x) => x.name === name);
    if (m.type === 'NDEATH') {
      if (m.payload.seq !== undefined && m.payload.seq !== null) breaks.push(`${where}: an NDEATH carries no seq`);
      if (bdSeq !== undefined && num(metric('bdSeq')?.value) !== bdSeq) breaks.push(`${where}: bdSeq ${num(metric('bdSeq')?.value)} is not the NBIRTH's ${bdSeq}`);
      seq = undefined;
      born.clear();
      return;
    }
    if (m.type === 'NBIRTH') {
      if (num(m.payload.seq) !== 0) breaks.push(`${where}: seq ${num(m.payload.seq)}, not 0`);
      if (metric('Node Control/Rebirth')?.value !== false) breaks.push(`${where}: no Node Control/Rebirth false`);
      bdSeq = num(metric('bdSeq')?.value);
      seq = 0;
      born.clear();
      return;
    }
    if (seq === undefined) return void breaks.push(`${where}: before any NBIRTH`);
    const next = (seq + 1) % 256;
    if (num(m.payload.seq) !== next) breaks.push(`${where}: seq ${num(m.payload.seq)} after ${seq}`);
    seq = num(m.payload.seq);
    if (m.type === 'DBIRTH') born.add(m.device as string);
    else if (!born.has(m.device as string)) breaks.push(`${where}: device not born in this session`);
    if (m.type === 'DDEATH') born.delete(m.device as string);
    if (m.type === 'DDATA' && m.payload.metrics?.some((x) => x.name !== undefined || x.alias === undefined)) breaks.push(`${where}: a DDATA metric with a name or without an alias`);
  });
  return breaks;
}

/** The history rows a Sparkplug subscriber received: each DDATA's and DBIRTH's History/seq with its device. */
export function sparkplugRows(decoded: readonly SparkplugMessage[]): { seq: number; machineID: string; historical: boolean }[] {
  const seqAlias = new Map<string, number>();
  const rows: { seq: number; machineID: string; historical: boolean }[] = [];
  for (const m of decoded) {
    if (m.type === 'DBIRTH') {
      const metric = m.payload.metrics?.find((x) => x.name === 'History/seq');
      seqAlias.set(m.device as string, num(metric?.alias));
      if (metric && metric.value !== null) rows.push({ seq: num(metric.value), machineID: m.device as string, historical: false });
    }
    if (m.type === 'DDATA') {
      const metric = m.payload.metrics?.find((x) => num(x.alias) === seqAlias.get(m.device as string));
      if (metric) rows.push({ seq: num(metric.value), machineID: m.device as string, historical: metric.isHistorical === true });
    }
  }
  return rows;
}
