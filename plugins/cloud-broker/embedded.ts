/**
 * The embedded broker (aedes) the gateways dial, with the cloud's rules:
 * only gateways connect (the relay works inside the broker), each as its
 * token (user name = the token id, password = the token, client id
 * gateway-<token id> and no other, so no gateway can take over another's
 * session), and each publishes only its own presence and answers and reads
 * only its own requests.
 */
import type { Logger } from 'pino';
import { gatewayClientId, topics } from '../../core/cloud-wire/protocol.js';
import { InProcessBroker } from '../../core/mqtt/broker.js';
import type { GatewayTokens } from '../../core/roles/cloud/tokens.js';

export interface EmbeddedBrokerOptions {
  host: string;
  port: number;
  tls?: { key: string | Buffer; cert: string | Buffer };
  topicPrefix: string;
}

export function embeddedBroker(tokens: GatewayTokens, o: EmbeddedBrokerOptions): InProcessBroker {
  const t = topics(o.topicPrefix);
  return new InProcessBroker({
    host: o.host,
    port: o.port,
    ...(o.tls ? { tls: o.tls } : {}),
    authenticate: async (username, password) => username !== undefined && (await tokens.verify(password)) === username,
    clientIdOf: gatewayClientId,
    // A gateway may only announce its own presence, read its own requests and answer on its own response topic of a cloud.
    authorizePublish: (username, topic) => username !== undefined && (topic === t.presence(username) || t.isAnswerTopicOf(username, topic)),
    authorizeSubscribe: (username, topic) => topic === t.requests(username ?? ''),
  });
}

/**
 * Checks the gateways connected to `broker` against revoked tokens every
 * `everyMs` and disconnects those whose token was revoked by the CLI (another
 * process); a revocation in this process disconnects at once. Returns the
 * function that stops the checks.
 */
export function sweepRevoked(broker: InProcessBroker, tokens: GatewayTokens, everyMs: number, logger: Logger): () => void {
  const sweep = setInterval(() => {
    void (async () => {
      for (const user of broker.connectedUsers()) {
        if (!(await tokens.isValid(user)) && broker.disconnectUser(user) > 0) logger.info({ tokenId: user }, 'cloud: a gateway whose token was revoked was disconnected');
      }
    })().catch((err: Error) => logger.warn({ err: err.message }, 'cloud: the revoked-token sweep failed'));
  }, everyMs);
  sweep.unref();
  return () => clearInterval(sweep);
}
