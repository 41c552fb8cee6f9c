/**
 * Sparkplug B payloads through Eclipse Tahu's payload library
 * (`sparkplug-payload`, the reference encoding of the specification's
 * protobuf); nothing here writes protobuf by hand.
 */
import { get } from 'sparkplug-payload';
import type { UPayload } from 'sparkplug-payload/lib/sparkplugbpayload.js';

export type { UMetric, UPayload } from 'sparkplug-payload/lib/sparkplugbpayload.js';

const found = get('spBv1.0');
if (!found) throw new Error("sparkplug-payload has no codec for 'spBv1.0'");
const codec = found;

/** The payload's bytes, without a copy. */
export function encodePayload(payload: UPayload): Buffer {
  const bytes = codec.encodePayload(payload);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A payload from its bytes; throws on bytes that are not one. */
export function decodePayload(bytes: Uint8Array): UPayload {
  return codec.decodePayload(bytes);
}
