/**
 * The only attributes a span may carry. Everything a span is given passes
 * through `allowedAttributes`: a key not listed here is dropped, and a text
 * value is cut to ATTRIBUTE_MAX_CHARS. So a token, a password, a cookie, a
 * query string, a program's contents or a whole body never reaches an
 * exporter, whatever a caller passes (docs/tracing.md, "What a span never
 * holds").
 */
import type { Attributes, AttributeValue } from '@opentelemetry/api';

/** Longest text value a span keeps. */
export const ATTRIBUTE_MAX_CHARS = 256;

/** The attribute keys a span may carry: semantic conventions' names first, then the product's own (`cncgw.*`). */
export const ALLOWED_ATTRIBUTES: ReadonlySet<string> = new Set([
  // HTTP (the path only: a query string may hold a token)
  'http.request.method',
  'http.route',
  'http.response.status_code',
  'url.path',
  'url.scheme',
  'server.address',
  'server.port',
  'client.address',
  // A driver's controller (its host and port, never its credentials)
  'network.peer.address',
  'network.peer.port',
  'user_agent.original',
  'network.protocol.version',
  'error.type',
  // MCP and JSON-RPC
  'mcp.method.name',
  'mcp.protocol.version',
  'gen_ai.tool.name',
  'gen_ai.operation.name',
  'jsonrpc.request.id',
  'rpc.system',
  'rpc.method',
  // Messaging (the relay over MQTT)
  'messaging.system',
  'messaging.destination.name',
  'messaging.operation.type',
  'messaging.operation.name',
  'messaging.message.id',
  // Databases (the operation and table, never the text or its values)
  'db.system.name',
  'db.operation.name',
  'db.collection.name',
  'db.namespace',
  // The product
  'cncgw.gateway.id',
  'cncgw.machine.id',
  'cncgw.interface',
  'cncgw.outcome',
  'cncgw.error.code',
  'cncgw.protocol',
  'cncgw.deployment.id',
  'cncgw.deployment.batch.id',
  'cncgw.deployment.purpose',
  'cncgw.deployment.step',
  'cncgw.deployment.resumed',
  'cncgw.lease.epoch',
  'cncgw.history.rows',
  'cncgw.machines',
]);

function bounded(value: AttributeValue): AttributeValue {
  return typeof value === 'string' && value.length > ATTRIBUTE_MAX_CHARS ? value.slice(0, ATTRIBUTE_MAX_CHARS) : value;
}

/** Whether a span may carry `key`. */
export function isAllowedAttribute(key: string): boolean {
  return ALLOWED_ATTRIBUTES.has(key);
}

/** The allowed ones of `attributes`, text cut to its bound; undefined values dropped. */
export function allowedAttributes(attributes: Record<string, AttributeValue | undefined>): Attributes {
  const out: Attributes = {};
  for (const key in attributes) {
    const value = attributes[key];
    if (value !== undefined && ALLOWED_ATTRIBUTES.has(key)) out[key] = bounded(value);
  }
  return out;
}
