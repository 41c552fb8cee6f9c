/**
 * Revocations made elsewhere (another cloud instance on the same database,
 * or `npm run cloud-token`), announced in this instance: every `everyMs` it
 * reads the revocations numbered above the last it saw (tokens.ts
 * `revokedSince`, one indexed query however many gateways are connected)
 * and emits `token.revoked` for each, with `elsewhere: true`. So the
 * gateway of a token revoked on one instance is unavailable on all, its
 * pending calls ended and its broker connection closed, within `everyMs`
 * plus a query (docs/cloud-relay.md, "Several cloud instances").
 */
import type { Logger } from 'pino';
import type { EventBus } from '../../runtime/event-bus.js';
import type { CloudEvents } from './context.js';
import type { GatewayTokens } from './tokens.js';

/** Starts reading; answers the function that stops it. */
export async function followRevocations(tokens: GatewayTokens, bus: EventBus<CloudEvents>, everyMs: number, logger: Logger): Promise<() => void> {
  let last = await tokens.lastRevocation();
  let running = false;
  let failing = false;
  const poll = async () => {
    if (running) return;
    running = true;
    try {
      for (;;) {
        const { ids, last: next, more } = await tokens.revokedSince(last);
        last = next;
        for (const tokenId of ids) {
          logger.info({ tokenId }, 'cloud: a gateway token was revoked elsewhere; its gateway is unavailable here from now on');
          bus.emit('token.revoked', { tokenId, elsewhere: true });
        }
        if (!more) break;
      }
      if (failing) logger.info('cloud: revocations are read again');
      failing = false;
    } catch (err) {
      if (!failing) logger.warn({ err: (err as Error).message }, 'cloud: the revocations made elsewhere could not be read; retrying');
      failing = true;
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void poll(), everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
