/**
 * TCP_NODELAY for an mqtt.js client's connection. mqtt.js opens its sockets
 * without it, so a small packet that follows another one not yet
 * acknowledged (a request after a PUBACK, an answer's second part) waits for
 * the peer's delayed ACK, about 40 ms per hop on Linux. A relayed call
 * crosses four such hops. Set at every (re)connection, before any packet
 * after CONNECT.
 */
import type { MqttClient } from 'mqtt';

export function keepNoDelay(client: MqttClient): MqttClient {
  const apply = () => {
    const stream = client.stream as { setNoDelay?: (noDelay?: boolean) => unknown } | undefined;
    stream?.setNoDelay?.(true);
  };
  apply();
  client.on('connect', apply);
  return client;
}
