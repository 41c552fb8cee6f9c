/**
 * The small tracing API the runtime, the roles, plugins and drivers use
 * (none of them imports the SDK). Until the SDK is started
 * (core/telemetry/start.ts, only when configured) every function here is a
 * check of one variable and a direct call: no span, no context, no
 * allocation on the hot paths.
 *
 * Which service a span belongs to: each role has its own tracer (its own
 * resource, `cncgw-gateway`, `cncgw-programs`, `cncgw-cloud`), and the
 * context carries the tracer of the role the work is done for. A role's
 * start runs in its role (core/runtime/role.ts), so whatever it sets going (timers,
 * listeners, actors) inherits it; a request to a role's listener is served
 * in that role (core/telemetry/http.ts); a call from one role into another
 * in the same process switches role (`inRole`) at the link.
 */
import {
  context,
  createContextKey,
  defaultTextMapGetter,
  defaultTextMapSetter,
  SpanKind,
  SpanStatusCode,
  trace,
  type AttributeValue,
  type Context,
  type Span,
  type TextMapPropagator,
  type Tracer,
} from '@opentelemetry/api';
import { allowedAttributes, ATTRIBUTE_MAX_CHARS } from './attributes.js';

/** What the started SDK gives the API (core/telemetry/sdk.ts). */
export interface TracingBackend {
  /** The tracer of a role this process runs; undefined for another. */
  tracerOf(role: string): Tracer | undefined;
  /** W3C trace context (traceparent, tracestate). */
  propagator: TextMapPropagator;
}

let backend: TracingBackend | undefined;

/** Turns the API on with a started SDK, or off again (undefined). */
export function setTracingBackend(next: TracingBackend | undefined): void {
  backend = next;
}

/** Whether tracing is on in this process. */
export function tracingEnabled(): boolean {
  return backend !== undefined;
}

const ROLE_TRACER = createContextKey('cncgw role tracer');

/** Runs `fn` as work of `role`: the spans it starts belong to that role's service. */
export function inRole<T>(role: string, fn: () => T): T {
  if (!backend) return fn();
  const tracer = backend.tracerOf(role);
  return tracer ? context.with(context.active().setValue(ROLE_TRACER, tracer), fn) : fn();
}

export type SpanKindName = 'internal' | 'server' | 'client' | 'producer' | 'consumer';
const KINDS: Record<SpanKindName, SpanKind> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

/** Attributes as callers give them; only the allowed ones are kept (core/telemetry/attributes.ts). */
export type SpanAttributes = Record<string, AttributeValue | undefined>;

export interface SpanOptions {
  kind?: SpanKindName;
  attributes?: SpanAttributes;
  /** The role whose service the span belongs to; by default the context's. */
  role?: string;
  /** The parent: a context extracted from a carrier; by default the active one. */
  parent?: Context;
  /** Start no span unless one is active (background work such as a poll is not a trace of its own). */
  childOnly?: boolean;
  /** Start a trace of its own even where a span is active (a periodic flush set going during a request is not part of it). */
  root?: boolean;
}

/** A started span, for work that starts and ends in different callbacks; `context` runs work inside it. */
export interface OpenSpan {
  readonly span: Span;
  readonly context: Context;
  set(attributes: SpanAttributes): void;
  /** Marks it failed with `errorType` (an error code, never a message). */
  fail(errorType: string): void;
  end(): void;
}

/** What `inSpan`'s callback may add to its span; does nothing while tracing is off. */
export interface SpanNote {
  set(attributes: SpanAttributes): void;
  fail(errorType: string): void;
}

const NO_NOTE: SpanNote = { set: () => undefined, fail: () => undefined };

/** The kind of a failure, for `error.type`: a GatewayError's name, else the error's class name. */
export function errorType(err: unknown): string {
  if (err && typeof err === 'object') {
    const named = (err as { errorName?: unknown }).errorName;
    if (typeof named === 'string') return named;
    if (err instanceof Error) return err.name;
  }
  return 'Error';
}

/** Starts a span (not made active); undefined while tracing is off or when there is no tracer or parent as `options` require. */
export function startSpan(name: string, options: SpanOptions = {}): OpenSpan | undefined {
  if (!backend) return undefined;
  const active = options.parent ?? context.active();
  const parent = options.root ? trace.deleteSpan(active) : active;
  const tracer = options.role ? backend.tracerOf(options.role) : (parent.getValue(ROLE_TRACER) as Tracer | undefined);
  if (!tracer) return undefined;
  if (options.childOnly && !trace.getSpan(parent)) return undefined;
  // A name may hold a client's text (a tool's name): bounded like an attribute.
  const span = tracer.startSpan(name.length > ATTRIBUTE_MAX_CHARS ? name.slice(0, ATTRIBUTE_MAX_CHARS) : name, { kind: KINDS[options.kind ?? 'internal'], attributes: allowedAttributes(options.attributes ?? {}) }, parent);
  const inside = trace.setSpan(parent.setValue(ROLE_TRACER, tracer), span);
  return {
    span,
    context: inside,
    set: (attributes) => void span.setAttributes(allowedAttributes(attributes)),
    fail: (type) => {
      span.setAttribute('error.type', type);
      span.setStatus({ code: SpanStatusCode.ERROR });
    },
    end: () => span.end(),
  };
}

/**
 * Runs `fn` inside a new span that ends when `fn` settles; a throw marks it
 * failed with its error's type and is thrown on. While tracing is off, it
 * only calls `fn`.
 */
export async function inSpan<T>(name: string, options: SpanOptions, fn: (note: SpanNote) => Promise<T> | T): Promise<T> {
  const open = backend ? startSpan(name, options) : undefined;
  if (!open) return fn(NO_NOTE);
  try {
    return await context.with(open.context, fn, undefined, open);
  } catch (err) {
    open.fail(errorType(err));
    throw err;
  } finally {
    open.end();
  }
}

/** Writes the active trace context (traceparent, tracestate) into `carrier`; nothing while tracing is off or no span is active. */
export function injectTrace(carrier: Record<string, string>, from: Context = context.active()): Record<string, string> {
  if (backend && trace.getSpan(from)) backend.propagator.inject(from, carrier, defaultTextMapSetter);
  return carrier;
}

/** The context a carrier's traceparent/tracestate continue (keys lower case); undefined while tracing is off or when it holds none. */
export function extractTrace(carrier: Record<string, string | string[] | undefined>): Context | undefined {
  if (!backend || carrier.traceparent === undefined) return undefined;
  const extracted = backend.propagator.extract(context.active(), carrier, defaultTextMapGetter);
  return trace.getSpan(extracted) ? extracted : undefined;
}

/** `trace_id` and `span_id` of the active span, for a log line; undefined while tracing is off or no span is active. */
export function activeTraceIds(): { trace_id: string; span_id: string } | undefined {
  if (!backend) return undefined;
  const span = trace.getSpan(context.active());
  if (!span) return undefined;
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/** The W3C `traceresponse` header naming `span` (version-traceid-spanid-flags). */
export function traceResponse(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}
