/**
 * The spans of the gateway's calls: one per MCP `tools/call` (the MCP
 * semantic conventions' `tools/call {tool}`) and one per interface call,
 * with the gateway and machine where the input names them and the outcome.
 * The MCP span continues a client's trace carried in the request's
 * `params._meta` (traceparent/tracestate) when no HTTP header carried it.
 * Callers check `tracingEnabled()` first, so a call pays nothing while tracing is off.
 */
import type { AttributeValue } from '@opentelemetry/api';
import { extractTrace, inSpan, type SpanNote } from './tracing.js';

/** The text of the first of `keys` that `input` holds as a string. */
function textField(input: Record<string, unknown>, keys: readonly string[]): string | undefined {
  for (const key of keys) if (typeof input[key] === 'string') return input[key];
  return undefined;
}

/** The machine and gateway an input names (`machineID`, `gatewayID`, text only), as span attributes. */
export function targetAttributes(input: unknown): Record<string, AttributeValue | undefined> {
  if (input === null || typeof input !== 'object') return {};
  const fields = input as Record<string, unknown>;
  return { 'cncgw.machine.id': textField(fields, ['machineID', 'machineId']), 'cncgw.gateway.id': textField(fields, ['gatewayID', 'gatewayId']) };
}

/** The trace context of an MCP request's `_meta`, if it holds a traceparent. */
function metaParent(meta: unknown) {
  if (meta === null || typeof meta !== 'object') return undefined;
  const { traceparent, tracestate } = meta as { traceparent?: unknown; tracestate?: unknown };
  if (typeof traceparent !== 'string') return undefined;
  return extractTrace({ traceparent, ...(typeof tracestate === 'string' ? { tracestate } : {}) });
}

/** Runs one MCP tool call inside its span; `run` reports through the note whether the result is a tool error. */
export function inToolCallSpan<T>(request: { name: string; arguments?: unknown; _meta?: unknown }, run: (note: SpanNote) => Promise<T>): Promise<T> {
  const parent = metaParent(request._meta);
  return inSpan(
    `tools/call ${request.name}`,
    {
      kind: 'server',
      ...(parent ? { parent } : {}),
      attributes: { 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': request.name, ...targetAttributes(request.arguments) },
    },
    run,
  );
}

/** Runs one interface call inside its span (only under a request's span: internal pollers make no traces of their own). */
export function inInterfaceSpan<T>(path: string, input: unknown, run: (note: SpanNote) => Promise<T>): Promise<T> {
  return inSpan(path, { childOnly: true, attributes: { 'cncgw.interface': path, ...targetAttributes(input) } }, run);
}
