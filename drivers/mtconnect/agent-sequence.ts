/**
 * The sequence rules of reading an agent, as its clients follow them: what
 * a /sample answer means for the reader at `position` (the agent instance it
 * reads and the first sequence it has not read). The new observations in
 * sequence order, none read twice; or why it must start over: from /probe
 * when the instanceId changed (the agent restarted and lost its buffer),
 * from /current on OUT_OF_RANGE (what it wants next left the buffer).
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
}

export type Judged = { kind: 'ok'; observations: StreamObservation[]; next: number } | Exclude<SampleOutcome, { kind: 'ok' }>;

/** What a /sample answer means at `position`; `where` names the agent in reasons. */
export function judgeSample(document: StreamsDocument, position: Position, where: string, describe: (errors: readonly AgentError[]) => string): Judged {
  const restarted = (instanceId: number | undefined) =>
    position.instanceId !== undefined && instanceId !== undefined && instanceId !== position.instanceId;
  const instance = document.kind === 'error' ? document.instanceId : document.header.instanceId;
  if (restarted(instance)) {
    return { kind: 'restart', reason: `mtconnect: ${where} restarted (instanceId ${position.instanceId} → ${instance}); starting over from /probe` };
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
