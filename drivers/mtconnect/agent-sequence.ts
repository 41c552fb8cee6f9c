/**
 * The sequence rules of reading an agent, as its clients follow them: what
 * a /sample answer means for the reader at `position` (the agent instance it
 * reads and the first sequence it has not read). The new observations in
 * sequence order, none read twice; or why it must start over: from /probe
 * when the instanceId changed (the agent restarted and lost its buffer),
 * from /current on OUT_OF_RANGE (what it wants next left the buffer). When
 * the header's deviceModelChangeTime moved (the agent's devices gained or
 * lost data items), it probes again and carries on from the same sequence.
 */
import { inSequenceOrder, type AgentError, type StreamObservation, type StreamsDocument } from './streams.js';

/**
 * How an attempt to sample went: on; or failed for now (the position is
 * kept, the next attempt resumes); or why it must start over, from /current
 * (OUT_OF_RANGE) or from /probe (the agent restarted, or refused the device).
 */
export type SampleOutcome = { kind: 'ok' } | { kind: 'failed'; reason: string } | { kind: 'current'; reason: string } | { kind: 'restart'; reason: string };

export interface Position {
  instanceId: number | undefined;
  next: number | undefined;
  /** The deviceModelChangeTime of the probe the reader holds, when the agent gave one. */
  modelChangedAt?: string | undefined;
}

export type Judged = { kind: 'ok'; observations: StreamObservation[]; next: number } | { kind: 'model'; reason: string } | Exclude<SampleOutcome, { kind: 'ok' }>;

/** What a /sample answer means at `position`; `where` names the agent in reasons. */
export function judgeSample(document: StreamsDocument, position: Position, where: string, describe: (errors: readonly AgentError[]) => string): Judged {
  const restarted = (instanceId: number | undefined) =>
    position.instanceId !== undefined && instanceId !== undefined && instanceId !== position.instanceId;
  const instance = document.kind === 'error' ? document.instanceId : document.header.instanceId;
  if (restarted(instance)) {
    return { kind: 'restart', reason: `mtconnect: ${where} restarted (instanceId ${position.instanceId} → ${instance}); starting over from /probe` };
  }
  if (document.kind === 'streams' && position.modelChangedAt !== undefined && document.header.deviceModelChangeTime !== undefined && document.header.deviceModelChangeTime !== position.modelChangedAt) {
    return { kind: 'model', reason: `mtconnect: ${where} changed its device model (deviceModelChangeTime ${position.modelChangedAt} → ${document.header.deviceModelChangeTime}); probing it again` };
  }
  if (document.kind === 'error') {
    const reason = `mtconnect: ${where} answered /sample?from=${position.next} with ${describe(document.errors)}`;
    if (document.errors.some((e) => e.code === 'OUT_OF_RANGE')) {
      return { kind: 'current', reason: `${reason}: the observations wanted left its buffer; starting over from /current` };
    }
    return { kind: 'restart', reason };
  }
  const from = position.next ?? 0;
  return {
    kind: 'ok',
    observations: inSequenceOrder(document.observations).filter((o) => o.sequence >= from),
    next: Math.max(from, document.header.nextSequence),
  };
}
