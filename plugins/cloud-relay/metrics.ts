/**
 * The cloud's metrics on its role's registry, around the relay service and
 * the token tables (what they count already is read at scrape time):
 *
 * - `cloud_gateways_connected`: gateways connected now;
 * - `cloud_relayed_calls_total{outcome}`: relayed tool calls by outcome
 *   (`ok`, `tool_error` for a tool's own error, `offline`, `timeout`,
 *   `malformed`);
 * - `cloud_relay_round_trip_seconds{outcome}` (histogram): from the call
 *   sent towards its gateway to its answer joined, what the relay adds to
 *   the gateway's own time (`gateway_mcp_tool_call_duration_seconds` on the
 *   gateway) plus the broker's two hops;
 * - `cloud_relay_answer_bytes_total`: bytes of the answers relayed;
 * - `cloud_token_checks_total{kind,result}`: gateway token and admin key
 *   checks, `valid` or `invalid`.
 */
import { HTTP_DURATION_BUCKETS, type RoleMetrics } from '../../core/telemetry/metrics.js';
import type { CloudRelayService, RelayOutcome } from '../../core/roles/cloud/context.js';
import type { AdminKeys, GatewayTokens } from '../../core/roles/cloud/tokens.js';

function outcomeOf(outcome: RelayOutcome): string {
  if (!outcome.ok) return outcome.reason;
  return outcome.isError ? 'tool_error' : 'ok';
}

/** The relay service with every call counted and timed; the rest passed through. */
export function countedRelay(relay: CloudRelayService, metrics: RoleMetrics, tables: { tokens: GatewayTokens; adminKeys: AdminKeys }): CloudRelayService {
  metrics.gauge({ name: 'cloud_gateways_connected', help: 'Gateways connected to the cloud now.', collect() {
    this.set(relay.onlineGateways().length);
  } });
  const calls = metrics.counter({ name: 'cloud_relayed_calls_total', help: 'Tool calls relayed to gateways, by outcome.', labelNames: ['outcome'] });
  const roundTrip = metrics.histogram({ name: 'cloud_relay_round_trip_seconds', help: 'Time from a call sent towards its gateway to its answer joined, by outcome.', labelNames: ['outcome'], buckets: HTTP_DURATION_BUCKETS });
  const answerBytes = metrics.counter({ name: 'cloud_relay_answer_bytes_total', help: 'Bytes of the gateways\' answers relayed.' });
  const checks = metrics.counter({ name: 'cloud_token_checks_total', help: 'Checks of gateway tokens and admin keys, by result.', labelNames: ['kind', 'result'] });
  tables.tokens.onChecked = (valid) => checks.inc({ kind: 'gateway_token', result: valid ? 'valid' : 'invalid' });
  tables.adminKeys.onChecked = (valid) => checks.inc({ kind: 'admin_key', result: valid ? 'valid' : 'invalid' });
  return {
    get instanceId() {
      return relay.instanceId;
    },
    isOnline: (tokenId) => relay.isOnline(tokenId),
    onlineGateways: () => relay.onlineGateways(),
    brokerLink: () => relay.brokerLink(),
    forget: (tokenId) => relay.forget(tokenId),
    async call(tokenId, params, deadlineMs, correlationId) {
      const started = performance.now();
      const outcome = await relay.call(tokenId, params, deadlineMs, correlationId);
      const label = { outcome: outcomeOf(outcome) };
      calls.inc(label);
      roundTrip.observe(label, (performance.now() - started) / 1000);
      if (outcome.ok) answerBytes.inc(outcome.size);
      return outcome;
    },
  };
}
