/**
 * Trace context across the relay over MQTT: the W3C `traceparent` and
 * `tracestate` travel in the MQTT 5 user properties of a request (and of
 * its answer's parts) on an MQTT 5 session, and in the request's envelope
 * (`trace`) on every session, so the trace holds on the embedded broker's
 * MQTT 3.1.1 sessions too. The receiving side prefers the user properties.
 */
import type { Context } from '@opentelemetry/api';
import { extractTrace, injectTrace, type OpenSpan } from './tracing.js';

/** The trace fields of a carrier: what the envelope's `trace` and the user properties hold. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/** The carrier naming `open` (its traceparent and tracestate), for the next hop; undefined without a span. */
export function carrierOf(open: OpenSpan | undefined): TraceCarrier | undefined {
  if (!open) return undefined;
  const carrier = injectTrace({}, open.context);
  return typeof carrier.traceparent === 'string' ? (carrier as unknown as TraceCarrier) : undefined;
}

function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  return Array.isArray(value) && typeof value[0] === 'string' ? value[0] : undefined;
}

/** The fields of `source` (user properties, an envelope's `trace`) that form a carrier; undefined when there is no traceparent. */
function carrierIn(source: unknown): TraceCarrier | undefined {
  if (source === null || typeof source !== 'object') return undefined;
  const traceparent = textOf((source as Record<string, unknown>).traceparent);
  if (traceparent === undefined) return undefined;
  const tracestate = textOf((source as Record<string, unknown>).tracestate);
  return tracestate === undefined ? { traceparent } : { traceparent, tracestate };
}

/** The context a received message continues: its MQTT 5 user properties', else its envelope's; undefined when neither holds one. */
export function messageParent(userProperties: unknown, envelope: unknown): Context | undefined {
  const carrier = carrierIn(userProperties) ?? carrierIn(envelope);
  return carrier ? extractTrace({ ...carrier }) : undefined;
}
