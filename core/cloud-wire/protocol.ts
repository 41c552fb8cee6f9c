/**
 * The cloud relay's wire format: topics and payloads between the cloud and
 * the gateways that dial out to the broker (docs/cloud-relay.md, so another
 * implementation can interoperate).
 *
 *   {prefix}/gateways/{tokenId}/presence              retained; {"state":"online"|"offline", ...}; the will says offline
 *   {prefix}/gateways/{tokenId}/requests              cloud → gateway: a tool call
 *   {prefix}/clouds/{instanceId}/responses/{tokenId}  gateway → cloud: the answer, in parts
 *
 * The last level of an answer's topic names the gateway that sent it: the
 * broker lets a gateway publish answers only there (its own token id), and
 * the cloud takes an answer for a call only on the topic of the gateway it
 * asked, so no gateway can answer for another.
 *
 * A request names where its answer goes and carries a correlation id. On an
 * MQTT 5 session they are also the message's response topic and correlation
 * data properties (MQTT 5 request/response); the payload carries them as
 * well, because the embedded broker (aedes) speaks MQTT 3.1.1 only. An
 * answer is cut into parts of at most PART_BYTES, so that no message exceeds
 * a broker's packet limit (many clusters cap packets at 1 MB or less); the
 * cloud joins the parts by correlation id and index.
 */

import { isRecord } from '../values/json-value.js';
import { isJsonStringLiteral } from './literal-check.js';

export const DEFAULT_TOPIC_PREFIX = 'cncgw/v1';
/** A gateway token is `cgw_<id>_<secret>`: the id names the gateway in topics and is its broker user name. */
export const GATEWAY_TOKEN_PREFIX = 'cgw';
/** Bytes of answer per message (and a header of under 200 bytes). */
export const PART_BYTES = 64 * 1024;
/** How long the cloud waits for an answer; IoT hubs use 30 s by default. */
export const DEFAULT_CALL_DEADLINE_MS = 30_000;

export const topics = (prefix: string) => {
  const quoted = prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const gatewayTopic = new RegExp(`^${quoted}/gateways/([^/]+)/(presence|requests)$`);
  // A level of a topic name: no separator, no wildcard.
  const answerTopic = new RegExp(`^${quoted}/clouds/([^/+#]+)/responses(?:/([^/+#]+))?$`);
  return {
    presence: (tokenId: string) => `${prefix}/gateways/${tokenId}/presence`,
    presenceAll: () => `${prefix}/gateways/+/presence`,
    requests: (tokenId: string) => `${prefix}/gateways/${tokenId}/requests`,
    /** Where the gateway of `tokenId` answers this cloud instance. */
    responses: (instanceId: string, tokenId: string) => `${prefix}/clouds/${instanceId}/responses/${tokenId}`,
    /** Every gateway's answers to this cloud instance (a subscription filter). */
    responsesAll: (instanceId: string) => `${prefix}/clouds/${instanceId}/responses/+`,
    /** The token id in a gateway topic, or undefined. */
    tokenIdOf: (topic: string): string | undefined => gatewayTopic.exec(topic)?.[1],
    /** The gateway (token id) that sent an answer on `topic` to this cloud instance, or undefined when it is not such a topic. */
    answererOf: (instanceId: string, topic: string): string | undefined => {
      const m = answerTopic.exec(topic);
      return m && m[1] === instanceId ? m[2] : undefined;
    },
    /**
     * Whether the gateway of `tokenId` may answer on `topic`: a cloud's
     * response topic for that gateway. With `legacy`, also a cloud's bare
     * `…/responses` topic (what clouds before the per-gateway topics asked
     * for, which such a cloud's broker still takes).
     */
    isAnswerTopicOf: (tokenId: string, topic: string, legacy = false): boolean => {
      const m = answerTopic.exec(topic);
      return m !== null && (m[2] === tokenId || (legacy && m[2] === undefined));
    },
  };
};

/** The client id a gateway connects with: bound to its token id, so no other credentials may use it (docs/cloud-relay.md). */
export const gatewayClientId = (tokenId: string): string => `gateway-${tokenId}`;

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
  /** The W3C trace context of the cloud's relay span, while tracing is on (docs/tracing.md); the MQTT 5 user properties carry it too. */
  trace?: { traceparent: string; tracestate?: string };
}

/**
 * The header of one part of an answer, gateway → cloud. The payload is this
 * header as JSON, a newline (0x0A), then the part's bytes. The answer is the
 * tool result's text as a JSON string literal (quotes included, UTF-8):
 * the bytes that stand for that text in the MCP response, so neither side
 * encodes or parses some hundred kilobytes again. Parts are byte slices;
 * the cloud joins them in index order.
 */
export interface RelayAnswerHeader {
  v: 1;
  id: string;
  /** 0-based part index and the number of parts. */
  part: number;
  parts: number;
  /** The result is a tool error. */
  isError?: true;
}

/** The largest answer the cloud takes (a 1,000-machine list_machines is about 160 KB). */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
const MAX_PARTS = 10_000;
const NEWLINE = 0x0a;

/** The payloads of one answer: `literal` (the text's JSON string literal, in pieces) cut into parts of at most `partBytes`. */
export function answerPayloads(id: string, literal: readonly Buffer[], isError: boolean, partBytes = PART_BYTES): Buffer[] {
  const bytes = literal.length === 1 ? (literal[0] as Buffer) : Buffer.concat(literal as Buffer[]);
  const parts = Math.max(1, Math.ceil(bytes.length / partBytes));
  const payloads: Buffer[] = [];
  for (let part = 0; part < parts; part++) {
    const header: RelayAnswerHeader = { v: 1, id, part, parts, ...(isError ? { isError: true as const } : {}) };
    payloads.push(Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), bytes.subarray(part * partBytes, (part + 1) * partBytes)]));
  }
  return payloads;
}

/** The JSON string literal of `text`, as answerPayloads takes it. */
export function textLiteral(text: string): Buffer[] {
  return [Buffer.from(JSON.stringify(text))];
}

/**
 * Whether `bytes` is one JSON string literal: quotes at both ends, no
 * unescaped quote or control character inside, valid escapes, valid UTF-8.
 * The cloud puts a gateway's answer into its response unparsed, so an
 * answer that is anything else (that would end the string and add JSON of
 * its own) is refused.
 */
export { isJsonStringLiteral };

/** A part read from its payload. */
export interface RelayAnswerPart {
  header: RelayAnswerHeader;
  bytes: Buffer;
}

/** An answer whose parts have all arrived, in index order: not yet checked to make one JSON string literal (see joinedLiteral). */
export interface JoinedAnswer {
  parts: Buffer[];
  /** Their bytes in all. */
  size: number;
  isError: boolean;
}

/**
 * Joins the parts of one answer (in any order); the parts in order once all
 * have arrived. They are not copied into one buffer here: the cloud copies
 * them once, into its response, and checks the literal there.
 */
export class PartJoiner {
  private readonly parts: Buffer[] = [];
  private received = 0;
  private size = 0;
  private isError = false;

  constructor(readonly total: number) {}

  /** The answer when this part completes it; throws when the parts cannot make one. */
  add(part: RelayAnswerPart): JoinedAnswer | undefined {
    const { header, bytes } = part;
    if (header.parts !== this.total || header.part >= this.total || this.parts[header.part] !== undefined) return undefined;
    this.size += bytes.length;
    if (this.size > MAX_ANSWER_BYTES) throw new Error(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
    this.parts[header.part] = bytes;
    if (header.isError) this.isError = true;
    if (++this.received < this.total) return undefined;
    return { parts: this.parts, size: this.size, isError: this.isError };
  }
}

/** The answer's parts as one buffer, when they make one JSON string literal; otherwise undefined. */
export function joinedLiteral(answer: { parts: readonly Buffer[]; size: number }): Buffer | undefined {
  const literal = answer.parts.length === 1 ? (answer.parts[0] as Buffer) : Buffer.concat(answer.parts as Buffer[], answer.size);
  return isJsonStringLiteral(literal) ? literal : undefined;
}

/** What a correlation id may be: it goes into logs and the error log, so it is short and plain. */
export const CORRELATION_ID = /^[\w.-]{1,100}$/;

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
export function readPart(payload: Buffer): RelayAnswerPart | undefined {
  const nl = payload.indexOf(NEWLINE);
  if (nl < 0 || nl > 512) return undefined;
  try {
    const r = JSON.parse(payload.toString('utf8', 0, nl)) as unknown;
    if (!isRecord(r) || r.v !== 1 || typeof r.id !== 'string' || !Number.isInteger(r.part) || !Number.isInteger(r.parts)) return undefined;
    if ((r.parts as number) < 1 || (r.parts as number) > MAX_PARTS || (r.part as number) < 0 || (r.isError !== undefined && r.isError !== true)) return undefined;
    return { header: r as unknown as RelayAnswerHeader, bytes: payload.subarray(nl + 1) };
  } catch {
    return undefined;
  }
}
