/**
 * The relay benchmark's cloud, in its own process so that its RSS and CPU
 * are its own and it does not take turns with the gateway on one event
 * loop: a CloudRole with its embedded broker, and `tokens` gateway tokens
 * made at start (and, given an issuer and a port, OAuth on /mcp). Answers IPC messages: `usage` (RSS and CPU time so far),
 * `literalCheck` (the SIMD literal check on or off) and `stop`.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { useSimdLiteralCheck } from '../../core/cloud-wire/literal-check.js';
import { parseConfig } from '../../core/roles/index.js';
import { startTestCloud } from '../fixtures/cloud.js';

export interface CloudReady {
  kind: 'ready';
  mcpUrl: string;
  brokerUrl: string;
  tokens: string[];
}

export interface CloudUsage {
  kind: 'usage';
  rss: number;
  heapUsed: number;
  /** CPU time (user + system) since start, µs. */
  cpuMicros: number;
  online: number;
}

/** Turns the SIMD literal check on or off; the answer says whether this Node has WebAssembly SIMD. */
export interface LiteralCheckSwitch {
  kind: 'literalCheck';
  simd: boolean;
  simdAvailable?: boolean;
}

const tokenCount = Number(process.argv[2] ?? 1);
// With an issuer and a port (--gateways): /mcp takes that issuer's access tokens, every gateway visible to the claim value `all`.
const [issuer, oauthPort] = [process.argv[3], Number(process.argv[4] ?? 0)];
const dataDir = mkdtempSync(join(tmpdir(), 'relay-bench-cloud-'));
const mcpAuth = issuer ? { issuer, resource: `http://127.0.0.1:${oauthPort}/mcp`, gatewaysClaim: 'plants', gateways: { all: ['*'] } } : undefined;
const cloud = await startTestCloud({
  dataDir, logger: pino({ level: 'warn' }), version: 'bench',
  ...(mcpAuth ? { config: parseConfig({ dataDir, cloud: { mcpAuth } }, 'bench.json'), env: {}, embeddedBroker: { host: '127.0.0.1', port: 0 } } : {}),
});
const mcpUrl = `${await cloud.listen('127.0.0.1', oauthPort)}/mcp`;
const tokens: string[] = [];
for (let i = 0; i < tokenCount; i++) tokens.push((await cloud.tokens.create(`bench-${i}`)).token);
process.send?.({ kind: 'ready', mcpUrl, brokerUrl: cloud.brokerUrl as string, tokens } satisfies CloudReady);
process.on('message', (message: { kind: string }) => {
  if (message.kind === 'usage') {
    const cpu = process.cpuUsage();
    const ids = tokens.map((t) => t.split('_')[1] as string);
    process.send?.({ kind: 'usage', rss: process.memoryUsage().rss, heapUsed: process.memoryUsage().heapUsed, cpuMicros: cpu.user + cpu.system, online: ids.filter((id) => cloud.relay.isOnline(id)).length } satisfies CloudUsage);
  } else if (message.kind === 'literalCheck') {
    // The benchmark switch between the SIMD and the scalar literal check (--literal-check).
    const { simd } = message as unknown as LiteralCheckSwitch;
    process.send?.({ kind: 'literalCheck', simd, simdAvailable: useSimdLiteralCheck(simd) } satisfies LiteralCheckSwitch);
  } else if (message.kind === 'stop') {
    void cloud.stop().then(() => process.exit(0));
  }
});
process.on('disconnect', () => void cloud.stop().then(() => process.exit(0)));
