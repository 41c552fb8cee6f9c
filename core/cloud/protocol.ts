/**
 * The cloud relay's wire format: topics and payloads between the cloud and
 * the gateways that dial out to the broker (docs/cloud-relay.md, so another
 * implementation can interoperate).
 *
 *   {prefix}/gateways/{tokenId}/presence    retained; {"state":"online"|"offline", ...}; the will says offline
 *   {prefix}/gateways/{tokenId}/requests    cloud → gateway: a tool call
 *   {prefix}/clouds/{instanceId}/responses  gateway → cloud: the answer, in parts
 *
 * A request names where its answer goes and carries a correlation id. On an
 * MQTT 5 session they are also the message's response topic and correlation
 * data properties (MQTT 5 request/response); the payload carries them as
 * well, because the embedded broker (aedes) speaks MQTT 3.1.1 only. An
 * answer is cut into parts of at most PART_BYTES, so that no message exceeds
 * a broker's packet limit (many clusters cap packets at 1 MB or less); the
 * cloud joins the parts by correlation id and index.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

export const DEFAULT_TOPIC_PREFIX = 'cncgw/v1';
/** Bytes of answer text per message. */
export const PART_BYTES = 64 * 1024;
/** How long the cloud waits for an answer; IoT hubs use 30 s by default. */
export const DEFAULT_CALL_DEADLINE_MS = 30_000;

export const topics = (prefix: string) => ({
  presence: (tokenId: string) => `${prefix}/gateways/${tokenId}/presence`,
  presenceAll: () => `${prefix}/gateways/+/presence`,
  requests: (tokenId: string) => `${prefix}/gateways/${tokenId}/requests`,
  responses: (instanceId: string) => `${prefix}/clouds/${instanceId}/responses`,
  /** The token id in a gateway topic, or undefined. */
  tokenIdOf: (topic: string): string | undefined => {
    const m = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/gateways/([^/]+)/(presence|requests)$`).exec(topic);
    return m?.[1];
  },
});

export interface Presence {
  state: 'online' | 'offline';
  /** The gateway's name and software version, when online. */
  gateway?: string;
  version?: string;
  /** Unix ms the gateway connected. */
  since?: number;
}

/** A tool call, cloud → gateway. */
export interface RelayRequest {
  v: 1;
  /** Correlation id: the answer carries it back; also the id written in both sides' logs. */
  id: string;
  /** Where the answer goes (the MQTT 5 response topic as well). */
  replyTo: string;
  /** Unix ms after which the cloud no longer waits: the gateway may drop the call. */
  deadline: number;
  method: 'tools/call';
  params: { name: string; arguments?: Record<string, unknown> };
}

/** One part of an answer, gateway → cloud. */
export interface RelayResponsePart {
  v: 1;
  id: string;
  /** 0-based part index and the number of parts. */
  part: number;
  parts: number;
  /** A slice of the JSON text of the CallToolResult. */
  chunk: string;
}

/** Cuts the answer's JSON into parts of at most `partBytes` bytes of UTF-8, never inside a character. */
export function answerParts(id: string, result: CallToolResult, partBytes = PART_BYTES): RelayResponsePart[] {
  const bytes = Buffer.from(JSON.stringify(result), 'utf8');
  const chunks: string[] = [];
  for (let start = 0; start < bytes.length; ) {
    let end = Math.min(bytes.length, start + partBytes);
    // Back off continuation bytes (10xxxxxx) so that a character is never cut.
    while (end < bytes.length && end > start && ((bytes[end] as number) & 0xc0) === 0x80) end--;
    chunks.push(bytes.toString('utf8', start, end));
    start = end;
  }
  if (chunks.length === 0) chunks.push('');
  return chunks.map((chunk, part) => ({ v: 1, id, part, parts: chunks.length, chunk }));
}

/** Joins parts of one answer (in any order) once all have arrived. */
export class PartJoiner {
  private readonly parts: string[] = [];
  private received = 0;

  constructor(readonly total: number) {}

  add(part: RelayResponsePart): CallToolResult | undefined {
    if (part.parts !== this.total || part.part < 0 || part.part >= this.total || this.parts[part.part] !== undefined) return undefined;
    this.parts[part.part] = part.chunk;
    this.received++;
    return this.received === this.total ? (JSON.parse(this.parts.join('')) as CallToolResult) : undefined;
  }
}

/** What a correlation id may be: it goes into logs and the error log, so it is short and plain. */
export const CORRELATION_ID = /^[\w.-]{1,100}$/;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Reads a request payload; undefined when it is not one. */
export function readRequest(payload: Buffer): RelayRequest | undefined {
  try {
    const r = JSON.parse(payload.toString('utf8')) as unknown;
    if (!isRecord(r) || r.v !== 1 || typeof r.id !== 'string' || !CORRELATION_ID.test(r.id) || typeof r.replyTo !== 'string' || typeof r.deadline !== 'number' || r.method !== 'tools/call') return undefined;
    const params = r.params;
    if (!isRecord(params) || typeof params.name !== 'string' || (params.arguments !== undefined && !isRecord(params.arguments))) return undefined;
    return r as unknown as RelayRequest;
  } catch {
    return undefined;
  }
}

/** Reads an answer part; undefined when it is not one. */
export function readPart(payload: Buffer): RelayResponsePart | undefined {
  try {
    const r = JSON.parse(payload.toString('utf8')) as unknown;
    if (!isRecord(r) || r.v !== 1 || typeof r.id !== 'string' || !Number.isInteger(r.part) || !Number.isInteger(r.parts) || typeof r.chunk !== 'string') return undefined;
    if ((r.parts as number) < 1 || (r.parts as number) > 10_000) return undefined;
    return r as unknown as RelayResponsePart;
  } catch {
    return undefined;
  }
}
