/**
 * A deployment batch as one trace (docs/tracing.md, "A deployment's
 * trace"). The batch's span lasts while the batch is stored and its actors
 * are started; its trace context is stored with the batch and each of its
 * deployments. Each deployment's run on an instance is a transfer span
 * continued from that stored context, so a deployment resumed after a
 * restart or taken over by another instance stays in its batch's trace; its
 * steps (upload, read-back, verify) are spans under it, and the link calls
 * they make continue into the gateway. While tracing is off, nothing here
 * starts a span or stores a context.
 */
import { extractTrace, injectTrace, inSpan, startSpan, tracingEnabled, type OpenSpan, type SpanAttributes } from '../../core/telemetry/tracing.js';

/** A stored W3C trace context. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

/** A stored trace context from its two columns; null when none was stored. */
export function carrierOf(traceparent: unknown, tracestate: unknown): TraceCarrier | null {
  if (typeof traceparent !== 'string' || traceparent === '') return null;
  return typeof tracestate === 'string' && tracestate !== '' ? { traceparent, tracestate } : { traceparent };
}

/** The role whose service the deployments' spans belong to. */
const ROLE = 'programs';

/** The span of a batch being made: `carrier` is what is stored with it (null while tracing is off). */
export interface BatchSpan {
  readonly carrier: TraceCarrier | null;
  set(attributes: SpanAttributes): void;
  fail(errorType: string): void;
  end(): void;
}

const NO_BATCH_SPAN: BatchSpan = { carrier: null, set: () => undefined, fail: () => undefined, end: () => undefined };

/** Starts a batch's span under the active one (the request that asked for it), or as a trace of its own. */
export function startBatchSpan(batchId: string, attributes: SpanAttributes): BatchSpan {
  const open = tracingEnabled() ? startSpan('deployment batch', { role: ROLE, attributes: { 'cncgw.deployment.batch.id': batchId, ...attributes } }) : undefined;
  if (!open) return NO_BATCH_SPAN;
  const carrier = injectTrace({}, open.context);
  return {
    carrier: carrierOf(carrier.traceparent, carrier.tracestate),
    set: (a) => open.set(a),
    fail: (type) => open.fail(type),
    end: () => open.end(),
  };
}

/** The steps of a deployment that are spans of their own. */
export type DeploymentStep = 'upload' | 'read-back' | 'verify';

/** The transfer spans of the deployments an instance runs, one per deployment while it runs here. */
export class TransferSpans {
  private readonly open = new Map<string, OpenSpan>();

  /**
   * Starts the transfer span of a deployment whose actor starts here, under
   * its batch's stored context (a trace of its own when none was stored).
   */
  begin(deploymentId: string, trace: TraceCarrier | null | undefined, attributes: SpanAttributes): void {
    if (!tracingEnabled()) return;
    this.end(deploymentId, 'restarted');
    const parent = trace ? extractTrace({ ...trace }) : undefined;
    const span = startSpan('deployment transfer', { role: ROLE, ...(parent ? { parent } : { root: true }), attributes: { 'cncgw.deployment.id': deploymentId, ...attributes } });
    if (span) this.open.set(deploymentId, span);
  }

  /** Adds attributes to a running deployment's transfer span. */
  note(deploymentId: string, attributes: SpanAttributes): void {
    this.open.get(deploymentId)?.set(attributes);
  }

  /** Runs a step of a deployment as a span under its transfer span: the link call it makes continues into the gateway. */
  step<T>(deploymentId: string, step: DeploymentStep, attributes: SpanAttributes, run: () => Promise<T>): Promise<T> {
    const transfer = this.open.get(deploymentId);
    if (!transfer) return run();
    return inSpan(`deployment ${step}`, { parent: transfer.context, attributes: { 'cncgw.deployment.id': deploymentId, 'cncgw.deployment.step': step, ...attributes } }, run);
  }

  /** Ends a deployment's transfer span here with `outcome` (its final status, or why it stopped here); `failed` marks it failed. */
  end(deploymentId: string, outcome: string, failed = false): void {
    const span = this.open.get(deploymentId);
    if (!span) return;
    this.open.delete(deploymentId);
    span.set({ 'cncgw.outcome': outcome });
    if (failed) span.fail('deployment_failed');
    span.end();
  }

  /** Ends every transfer span (this instance stops: another resumes the deployments in their batches' traces). */
  endAll(outcome: string): void {
    for (const id of [...this.open.keys()]) this.end(id, outcome);
  }
}
