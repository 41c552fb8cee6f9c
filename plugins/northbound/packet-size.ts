/**
 * A message's size on the wire, to hold it against the broker's maximum
 * packet size (which an MQTT 5 broker announces on connecting, and which a
 * target may state for an MQTT 3.1.1 one): a broker closes the connection
 * of a client that sends a larger packet, so a message that would not fit
 * is skipped and reported instead of being sent again at every connection.
 */
import type { Logger } from 'pino';
import type { OutMessage } from './format.js';

/** The bytes of an MQTT PUBLISH packet: fixed header, topic, packet id (QoS 1), properties (MQTT 5, none), payload. */
export function publishPacketBytes(message: OutMessage, qos: 0 | 1, protocolVersion: 4 | 5): number {
  const payload = typeof message.payload === 'string' ? Buffer.byteLength(message.payload) : message.payload.length;
  const remaining = 2 + Buffer.byteLength(message.topic) + (qos > 0 ? 2 : 0) + (protocolVersion === 5 ? 1 : 0) + payload;
  const lengthBytes = remaining < 128 ? 1 : remaining < 16_384 ? 2 : remaining < 2_097_152 ? 3 : 4;
  return 1 + lengthBytes + remaining;
}

/** The log of skipped messages: the first ten, then every hundredth, so a flood of them does not flood the log. */
export class OversizeLog {
  constructor(
    private readonly logger: Logger,
    private readonly target: string,
  ) {}

  /** Logs a skipped message when its turn comes; answers the error text the status shows. */
  skipped(topic: string, bytes: number, maxPacket: number, total: number): string {
    const message = `a message of ${bytes} bytes on ${topic.slice(0, 200)} is larger than the broker's maximum packet size (${maxPacket} bytes) and was skipped`;
    if (total <= 10 || total % 100 === 0) this.logger.warn({ bytes, maxPacket, oversizeRows: total }, `northbound target '${this.target}': ${message}`);
    return message;
  }
}
