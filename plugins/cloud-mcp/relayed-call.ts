/**
 * One tool call of the cloud's /mcp, relayed to the gateway its token
 * selects (GW-85): the gateway's answer as a JSON string literal in parts
 * (checked where it is joined), or a text of the cloud's own saying why
 * there is none (no token GW-86, an unknown tool, the gateway offline or
 * late GW-87).
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { GatewayError, quote } from '../../core/interfaces/errors.js';
import type { ToolCatalogue } from '../../core/mcp/dispatch.js';
import type { CloudRelayService } from '../../core/roles/cloud/context.js';

export const UNAUTHORIZED_TEXT = 'Unauthorized: missing or unknown accessToken header.';

/**
 * What a relayed tool call answers: the gateway's text as a JSON string
 * literal in parts (with the text to answer instead if they do not make one),
 * or a text of the cloud's own.
 */
export type ToolAnswer = { parts: readonly Buffer[]; size: number; isError: boolean; ifMalformed: string } | { text: string; isError: true };

export interface RelayedCallOptions {
  relay: CloudRelayService;
  catalogue: ToolCatalogue;
  deadlineMs: number;
  logger: Logger;
}

export type RelayedCall = (tokenId: string | undefined, name: string, args: Record<string, unknown> | undefined, correlation: string | string[] | undefined) => Promise<ToolAnswer>;

/** Always unique on the wire (concurrent calls may carry the same client header); a client's own id leads it, so it can be found in both sides' logs. */
function correlationIdOf(correlation: string | string[] | undefined): string {
  const unique = randomBytes(8).toString('hex');
  return typeof correlation === 'string' && /^[\w.-]{1,64}$/.test(correlation) ? `${correlation}.${unique}` : unique;
}

/** Relays one tool call to the token's gateway: its answer, or a text of the cloud's own saying why there is none. */
export function relayedCall(o: RelayedCallOptions): RelayedCall {
  return async (tokenId, name, args, correlation) => {
    if (!tokenId) return { text: UNAUTHORIZED_TEXT, isError: true };
    const path = o.catalogue.primaryPath(name);
    if (!path) return { text: `Unknown tool ${quote(name)}; accepted: ${o.catalogue.list().map((x) => x.name).join(', ')}`, isError: true };
    const correlationId = correlationIdOf(correlation);
    const started = Date.now();
    const outcome = await o.relay.call(tokenId, { name, ...(args ? { arguments: args } : {}) }, o.deadlineMs, correlationId);
    o.logger.info({ correlationId, gateway: tokenId, tool: name, ms: Date.now() - started, outcome: outcome.ok ? 'answered' : outcome.reason }, 'cloud tool call');
    const unreadable = `${path} failed: the gateway's answer could not be read (correlation id ${correlationId})`;
    if (outcome.ok) return { parts: outcome.parts, size: outcome.size, isError: outcome.isError, ifMalformed: unreadable };
    if (outcome.reason === 'malformed') return { text: unreadable, isError: true };
    if (outcome.reason === 'offline') {
      return { text: new GatewayError('GATEWAY_SERVICE_UNAVAILABLE', 'The accessToken is valid, but its gateway is offline on the broker (or never connected)').toToolMessage(path), isError: true };
    }
    const late = new GatewayError('GATEWAY_SERVICE_UNAVAILABLE', `It is connected but did not answer within ${o.deadlineMs} ms (correlation id ${correlationId})`);
    return { text: `${path} failed: ${late.errorName}(${late.errorCode}) ${late.message}. Hint: the gateway is connected but slow or busy; retry, or ask for less (a smaller window or limit).`, isError: true };
  };
}
