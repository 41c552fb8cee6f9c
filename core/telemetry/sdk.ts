/**
 * The OpenTelemetry SDK, imported only when tracing is configured
 * (core/telemetry/start.ts). One tracer provider per role, each with its
 * own resource (`service.name` cncgw-gateway, cncgw-programs, cncgw-cloud),
 * so one process running several roles shows as several services; the
 * providers share one context manager (AsyncLocalStorage) and one W3C
 * propagator, and none is registered as the global provider: spans are
 * only made through core/telemetry/tracing.ts, which picks the role's.
 *
 * The 2.12 / 0.223 release line is used: it runs on Node 20 and 24 (the
 * current line needs Node 22.15 or later; docs/tracing.md).
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { SamplerName, TelemetrySettings } from './settings.js';
import { setTracingBackend, type TracingBackend } from './tracing.js';

/** The product's version, on every resource. */
const SERVICE_VERSION = '0.1.0';

/** The tracing of a process: stop flushes what is still buffered and turns the API off. */
export interface StartedSdk {
  /** What the API was given (a benchmark switches between several started SDKs with it). */
  backend: TracingBackend;
  shutdown(): Promise<void>;
}

let contextManager: AsyncLocalStorageContextManager | undefined;

export function samplerFor(name: SamplerName, ratio: number): Sampler {
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
  }
}

/** The OTLP/HTTP exporter for the settings' protocol (protobuf or JSON). */
async function exporterFor(settings: TelemetrySettings) {
  const options = { url: settings.tracesUrl, headers: settings.headers };
  if (settings.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter(options);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(options);
}

/**
 * Starts one provider per role of `settings.serviceNames` and turns the
 * API on. `processor` replaces the OTLP exporter's batch processor (tests
 * give one with the in-memory exporter).
 */
export async function startSdk(settings: TelemetrySettings, processor?: SpanProcessor): Promise<StartedSdk> {
  const spanProcessor = processor ?? new BatchSpanProcessor(await exporterFor(settings));
  if (!contextManager) {
    contextManager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(contextManager);
  }
  const sampler = samplerFor(settings.sampler, settings.samplerArg);
  const providers = new Map<string, BasicTracerProvider>();
  for (const [role, serviceName] of Object.entries(settings.serviceNames)) {
    const resource = resourceFromAttributes({ ...settings.resourceAttributes, [ATTR_SERVICE_NAME]: serviceName, [ATTR_SERVICE_VERSION]: SERVICE_VERSION });
    providers.set(role, new BasicTracerProvider({ resource, sampler, spanProcessors: [spanProcessor] }));
  }
  const tracers = new Map([...providers].map(([role, provider]) => [role, provider.getTracer('cncgw', SERVICE_VERSION)]));
  const backend: TracingBackend = { tracerOf: (role) => tracers.get(role), propagator: new W3CTraceContextPropagator() };
  setTracingBackend(backend);
  return {
    backend,
    async shutdown() {
      setTracingBackend(undefined);
      // The providers share the processor: one flush and one shutdown export everything.
      await spanProcessor.forceFlush();
      await spanProcessor.shutdown();
      context.disable();
      contextManager = undefined;
    },
  };
}
