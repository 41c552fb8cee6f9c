/** The sequence rules of reading an agent: what a /sample answer means for a reader at its position. */
import { describe, expect, it } from 'vitest';
import { judgeSample } from '../../../drivers/mtconnect/agent-sequence.js';
import type { StreamObservation, StreamsDocument } from '../../../drivers/mtconnect/streams.js';

const obs = (sequence: number): StreamObservation => ({ dataItemId: 'x', type: 'PART_COUNT', category: 'EVENT', sequence, timestamp: '2026-01-05T08:00:00Z', value: String(sequence) });
const streams = (instanceId: number, next: number, sequences: number[]): StreamsDocument => ({
  kind: 'streams', header: { instanceId, nextSequence: next, firstSequence: 1, lastSequence: next - 1 }, observations: sequences.map(obs),
});
const describeErrors = (errors: readonly { code: string }[]) => errors.map((e) => e.code).join(', ');
const judge = (document: StreamsDocument, position: { instanceId: number; next: number; modelChangedAt?: string } = { instanceId: 7, next: 10 }) => judgeSample(document, position, 'agent A', describeErrors);

describe('reading an agent in sequence', () => {
  it('takes the observations from the position on, in sequence order, none twice, and moves the position to the answer\'s next', () => {
    expect(judge(streams(7, 14, [12, 9, 10, 13, 11]))).toEqual({ kind: 'ok', observations: [10, 11, 12, 13].map(obs), next: 14 });
    expect(judge(streams(7, 10, []))).toEqual({ kind: 'ok', observations: [], next: 10 });
  });

  it('starts over from /probe when the instanceId changed, in a streams or an error document', () => {
    expect(judge(streams(8, 3, [1, 2]))).toEqual({ kind: 'restart', reason: 'mtconnect: agent A restarted (instanceId 7 → 8); starting over from /probe' });
    expect(judge({ kind: 'error', instanceId: 8, errors: [{ code: 'OUT_OF_RANGE', message: '' }] })).toMatchObject({ kind: 'restart' });
  });

  it('starts over from /current on OUT_OF_RANGE, and from /probe on any other error', () => {
    expect(judge({ kind: 'error', instanceId: 7, errors: [{ code: 'OUT_OF_RANGE', message: '' }] })).toEqual({
      kind: 'current', reason: 'mtconnect: agent A answered /sample?from=10 with OUT_OF_RANGE: the observations wanted left its buffer; starting over from /current',
    });
    expect(judge({ kind: 'error', instanceId: undefined, errors: [{ code: 'NO_DEVICE', message: '' }] })).toEqual({ kind: 'restart', reason: 'mtconnect: agent A answered /sample?from=10 with NO_DEVICE' });
  });

  it('probes again when the header\'s deviceModelChangeTime moved since the probe (the devices gained or lost data items); not when the probe had none', () => {
    const changed = (at: string): StreamsDocument => ({ kind: 'streams', header: { instanceId: 7, nextSequence: 12, firstSequence: 1, lastSequence: 11, deviceModelChangeTime: at }, observations: [10, 11].map(obs) });
    const at = { instanceId: 7, next: 10, modelChangedAt: '2026-01-05T08:00:00Z' };
    expect(judge(changed('2026-01-05T08:05:00Z'), at)).toEqual({
      kind: 'model', reason: 'mtconnect: agent A changed its device model (deviceModelChangeTime 2026-01-05T08:00:00Z → 2026-01-05T08:05:00Z); probing it again',
    });
    expect(judge(changed('2026-01-05T08:00:00Z'), at)).toMatchObject({ kind: 'ok', next: 12 });
    expect(judge(changed('2026-01-05T08:05:00Z'))).toMatchObject({ kind: 'ok', next: 12 });
  });
});
