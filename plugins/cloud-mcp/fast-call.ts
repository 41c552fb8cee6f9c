/**
 * The cloud's own answer to a plain tools/call, without an SDK server: the
 * JSON-RPC response in the bytes the SDK would write (test/cloud/fast-call.test.ts
 * holds them to it), with the gateway's literal copied in unparsed, once.
 * Anything else (initialize, tools/list, batches, notifications, unusual
 * headers or fields) goes to the SDK.
 */
import type { FastifyRequest } from 'fastify';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { isJsonStringLiteral } from '../../core/cloud-wire/protocol.js';
import { isRecord } from '../../core/values/json-value.js';
import type { ToolAnswer } from './relayed-call.js';

const hasOnlyKeys = (o: Record<string, unknown>, keys: readonly string[]) => Object.keys(o).every((k) => keys.includes(k));

/**
 * The request when it is one plain tools/call that the SDK would take as is:
 * both media types accepted, a JSON body, a supported (or no) protocol
 * version header, one JSON-RPC request with a string or integer id, params
 * of a tool name and an arguments object, nothing else. Otherwise undefined.
 */
export function plainToolCall(request: Pick<FastifyRequest, 'headers' | 'body'>): { id: string | number; name: string; arguments?: Record<string, unknown> } | undefined {
  const { headers, body } = request;
  const accept = headers.accept;
  if (typeof accept !== 'string' || !accept.includes('application/json') || !accept.includes('text/event-stream')) return undefined;
  if (headers['content-type'] !== 'application/json') return undefined;
  const version = headers['mcp-protocol-version'];
  if (version !== undefined && (typeof version !== 'string' || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) return undefined;
  if (!isRecord(body) || !hasOnlyKeys(body, ['jsonrpc', 'id', 'method', 'params']) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return undefined;
  const id = body.id;
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isSafeInteger(id))) return undefined;
  const params = body.params;
  if (!isRecord(params) || !hasOnlyKeys(params, ['name', 'arguments']) || typeof params.name !== 'string') return undefined;
  if (params.arguments !== undefined && !isRecord(params.arguments)) return undefined;
  return { id, name: params.name, ...(params.arguments !== undefined ? { arguments: params.arguments } : {}) };
}

const RESULT_HEAD = Buffer.from('{"result":{"content":[{"type":"text","text":');
const RESULT_TAIL = Buffer.from('}]},"jsonrpc":"2.0","id":');
const ERROR_RESULT_TAIL = Buffer.from('}],"isError":true},"jsonrpc":"2.0","id":');

/**
 * The JSON-RPC response to a tool call, as the SDK writes it (JSON.stringify
 * of result, jsonrpc, id), the gateway's literal copied in unparsed, once,
 * and checked there; `malformed` is told when it is not one literal, and the
 * response then carries the answer's ifMalformed text.
 */
export function toolCallResponse(id: string | number, answer: ToolAnswer, malformed: () => void = () => undefined, alloc: (size: number) => Buffer = Buffer.allocUnsafe): Buffer {
  const end = Buffer.from(`${JSON.stringify(id)}}`);
  if ('text' in answer) return Buffer.concat([RESULT_HEAD, Buffer.from(JSON.stringify(answer.text)), ERROR_RESULT_TAIL, end]);
  const tail = answer.isError ? ERROR_RESULT_TAIL : RESULT_TAIL;
  const size = RESULT_HEAD.length + answer.size + tail.length + end.length;
  const out = alloc(size).subarray(0, size);
  let at = RESULT_HEAD.copy(out, 0);
  for (const part of answer.parts) at += part.copy(out, at);
  if (!isJsonStringLiteral(out.subarray(RESULT_HEAD.length, at))) {
    malformed();
    return toolCallResponse(id, { text: answer.ifMalformed, isError: true });
  }
  at += tail.copy(out, at);
  end.copy(out, at);
  return out;
}
