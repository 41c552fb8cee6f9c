/**
 * A role's metrics (core/telemetry/metrics.ts, core/telemetry/metrics-token.ts through
 * RoleRuntime): /metrics serves the exposition format only to the metrics
 * token; every request is counted and timed by route template; a token is
 * made at the first start, shown once and kept hashed; METRICS_TOKEN
 * replaces it; the three roles each serve their own.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createRestApp } from '../../core/rest/serve.js';
import { RoleRuntime } from '../../core/runtime/runtime.js';
import { METRICS_TOKEN_FILE } from '../../core/telemetry/metrics-token.js';
import { parseConfig } from '../../core/roles/index.js';
import { simMachine, startTestGateway } from '../fixtures/gateway.js';
import { startTestProgramService } from '../fixtures/programs.js';
import { startTestCloud } from '../fixtures/cloud.js';

const logger = pino({ level: 'silent' });
const toClose: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (toClose.length) await (toClose.pop() as () => Promise<void>)();
});

async function startRole(dataDir = mkdtempSync(join(tmpdir(), 'metrics-')), metricsToken?: string) {
  const runtime = await RoleRuntime.open({ role: 'example', dataDir, databaseFile: 'example.db', logger, now: Date.now, ...(metricsToken ? { metricsToken } : {}) });
  toClose.push(() => runtime.stop());
  const app = createRestApp(logger);
  app.get('/things/:id', async () => ({ ok: true }));
  await runtime.startPlugins([], {}, app);
  await app.ready();
  return { runtime, url: await runtime.listen('127.0.0.1', 0), dataDir };
}

const tokenIn = (announcements: readonly string[]) => /metrics token: +(mtk_\S+)/.exec(announcements.join('\n'))?.[1] as string;
const scrape = (url: string, token?: string) => fetch(`${url}/metrics`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

describe('metrics', () => {
  it('a scrape without the token or with another is 401; with it, the exposition format', async () => {
    const { runtime, url } = await startRole();
    const token = tokenIn(runtime.announcements);
    expect(token).toMatch(/^mtk_[A-Za-z0-9_-]{43}$/);
    for (const answer of [await scrape(url), await scrape(url, `${token}x`), await fetch(`${url}/metrics`, { headers: { authorization: token } })]) {
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toBe('Bearer realm="metrics"');
      expect(await answer.text()).not.toContain('process_cpu');
    }
    const answer = await scrape(url, token);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await answer.text();
    expect(text).toMatch(/^# HELP process_cpu_seconds_total /m);
    expect(text).toMatch(/^# TYPE http_request_duration_seconds histogram$/m);
  });

  it('counts and times requests by route template, method and code; unmatched paths share one series', async () => {
    const { runtime, url } = await startRole();
    for (const id of ['a', 'b', 'c']) await (await fetch(`${url}/things/${id}`)).text();
    for (const path of ['/x1', '/x2']) await (await fetch(`${url}${path}`)).text();
    const text = await (await scrape(url, tokenIn(runtime.announcements))).text();
    expect(text).toContain('http_requests_total{route="/things/:id",method="GET",code="200"} 3');
    expect(text).toContain('http_requests_total{route="unmatched",method="GET",code="404"} 2');
    expect(text).toContain('http_request_duration_seconds_count{route="/things/:id",method="GET",code="200"} 3');
    expect(text).not.toContain('/things/a');
  });

  it('the token is made once per data directory, shown only at that start, kept as a hash', async () => {
    const first = await startRole();
    const token = tokenIn(first.runtime.announcements);
    const stored = readFileSync(join(first.dataDir, METRICS_TOKEN_FILE), 'utf8');
    expect(stored).not.toContain(token);
    await first.runtime.stop();
    const again = await startRole(first.dataDir);
    expect(again.runtime.announcements).toEqual([]);
    expect((await scrape(again.url, token)).status).toBe(200);
  });

  it('metricsToken (or METRICS_TOKEN, its override) replaces the made token; one too short is refused naming both', async () => {
    const config = parseConfig({ metricsToken: 'from-the-file-not-used-here' }, '(inline)', { METRICS_TOKEN: 'a-token-of-24-characters' });
    expect(config.metricsToken).toBe('a-token-of-24-characters');
    const { runtime, url, dataDir } = await startRole(undefined, config.metricsToken);
    expect(runtime.announcements).toEqual([]);
    expect(existsSync(join(dataDir, METRICS_TOKEN_FILE))).toBe(false);
    expect((await scrape(url, 'a-token-of-24-characters')).status).toBe(200);
    await expect(RoleRuntime.open({ role: 'example', dataDir, databaseFile: 'example.db', logger, now: Date.now, metricsToken: 'short' }))
      .rejects.toThrow('metricsToken (METRICS_TOKEN): expected 16 to 512 printable characters without spaces');
  });

  it('parts register their own metrics on the role\'s registry', async () => {
    const { runtime, url } = await startRole();
    runtime.metrics.gauge({ name: 'example_queue_depth', help: 'Rows waiting.', collect() { this.set(7); } });
    expect(await (await scrape(url, tokenIn(runtime.announcements))).text()).toContain('example_queue_depth 7');
  });
});

describe('every role serves /healthz, /readyz and /metrics', () => {
  const TOKEN = 'metrics-token-for-the-three-roles';
  it('gateway, program service and cloud relay', async () => {
    const gw = await startTestGateway({ metricsToken: TOKEN });
    toClose.push(() => gw.stop());
    const programs = await startTestProgramService({ plugins: [], metricsToken: TOKEN });
    toClose.push(() => programs.stop());
    const cloud = await startTestCloud({ metricsToken: TOKEN });
    toClose.push(() => cloud.runtime.stop());
    const urls = [await gw.gateway.listen({ host: '127.0.0.1', port: 0 }), programs.url, await cloud.listen('127.0.0.1', 0)];
    for (const url of urls) {
      expect((await fetch(`${url}/healthz`)).status, url).toBe(200);
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status, url).toBe(200);
      expect(((await ready.json()) as { status: string }).status).toBe('ready');
      expect((await scrape(url)).status, url).toBe(401);
      const metrics = await (await scrape(url, TOKEN)).text();
      expect(metrics, url).toContain('http_requests_total{route="/readyz",method="GET",code="200"} 1');
    }
  });
});

describe('the gateway\'s own metrics', () => {
  it('machines by state and connection, samples with their lag, history rows, and MCP tool calls by tool and outcome', async () => {
    const gw = await startTestGateway({ metricsToken: 'metrics-token-for-the-gateway-metrics', machines: [simMachine('M1'), simMachine('M2', { isActive: false })] });
    toClose.push(() => gw.stop());
    const mcp = (name: string) => gw.gateway.http.inject({
      method: 'POST', url: '/mcp', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${gw.adminToken}` },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: {} } },
    });
    expect((await mcp('list_machines')).statusCode).toBe(200);
    await mcp('list_machines');
    await mcp('no_such_tool');
    const exposition = async () => (await gw.gateway.http.inject({ url: '/metrics', headers: { authorization: 'Bearer metrics-token-for-the-gateway-metrics' } })).body;
    // The simulator samples every 200 ms and the writer flushes within 750 ms: wait for both to have happened, however slow the machine.
    await vi.waitFor(async () => {
      const text = await exposition();
      expect(text).toMatch(/gateway_samples_total\{task="CNCStatus"\} [1-9]/);
      expect(text).toMatch(/gateway_history_flush_seconds_count [1-9]/);
    }, { timeout: 15_000, interval: 200 });
    const text = await exposition();
    expect(text).toContain('gateway_machines{state="inactive"} 1');
    expect(text).toContain('gateway_machine_connections{state="stopped"} 1');
    expect(text).toContain('gateway_mcp_tool_calls_total{tool="list_machines",outcome="ok"} 2');
    expect(text).toContain('gateway_mcp_tool_calls_total{tool="unknown",outcome="error"} 1');
    expect(text).toMatch(/gateway_sample_lag_seconds_count\{task="CNCStatus"\} [1-9]/);
    expect(text).toMatch(/gateway_history_rows_written_total [1-9]/);
    expect(text).toMatch(/gateway_history_queue_rows \d/);
  });
});
