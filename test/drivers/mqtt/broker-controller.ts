/**
 * What the shared MQTT scenarios need from a broker: start it (optionally
 * with users), stop it hard and start it again on the same port. The aedes
 * controller is here; the Mosquitto one is in test/peers/mosquitto.ts.
 */
import { InProcessBroker } from '../../../core/mqtt/broker.js';
import type { Peer } from '../../fixtures/peer-faults.js';

/** A running broker the test can kill and restart on the same port. */
export interface BrokerController extends Peer {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** Unix ms of the latest start. */
  readonly startedAt: number;
}

export interface BrokerKind {
  name: string;
  /** MQTT protocol versions the broker accepts (4 = 3.1.1, 5 = MQTT 5). */
  protocolVersions: ReadonlyArray<4 | 5>;
  /** Starts a broker on 127.0.0.1 and an OS-chosen port; with `users`, only those credentials are accepted. */
  start(options?: { users?: Record<string, string> }): Promise<BrokerController>;
}

/** aedes in this process (MQTT 3.1.1 only: aedes 1.x refuses MQTT 5). */
export const aedesBrokers: BrokerKind = {
  name: 'aedes',
  protocolVersions: [4],
  async start(options = {}) {
    const broker = new InProcessBroker({ ...(options.users ? { users: options.users } : {}) });
    let startedAt = Date.now();
    await broker.start();
    return {
      host: broker.host,
      get port() {
        return broker.port;
      },
      get url() {
        return broker.url;
      },
      get startedAt() {
        return startedAt;
      },
      async start() {
        startedAt = Date.now();
        await broker.start();
      },
      stop: () => broker.stop(),
    };
  },
};
