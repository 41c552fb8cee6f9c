/**
 * A real Prometheus scrapes the three roles' /metrics with the metrics
 * token, and PromQL over what it stored answers what the test did: the
 * readiness requests it sent to each role; the machines of the gateway by
 * state, the deployments the program service made, the calls the cloud
 * relayed and the tokens it checked.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { MqttClient } from 'mqtt';
import { InProcessGatewayLink } from '../../core/gateway-link/in-process.js';
import { assignmentsPlugin } from '../../plugins/assignments/index.js';
import { auditApiPlugin } from '../../plugins/audit-api/index.js';
import { deploymentsPlugin } from '../../plugins/deployments/index.js';
import { gatewaysPlugin } from '../../plugins/gateways/index.js';
import { vaultPlugin } from '../../plugins/vault/index.js';
import { webhooksPlugin } from '../../plugins/webhooks/index.js';
import { simMachine, startTestGateway } from '../fixtures/gateway.js';
import { startTestProgramService } from '../fixtures/programs.js';
import { login, TEST_ACCOUNTS, TEST_PROGRAMS_ADMIN_PASSWORD } from '../fixtures/programs-accounts.js';
import { scopedPlant } from '../fixtures/scoped-plant.js';
import { lightLink, startTestCloud, untilOnline } from '../fixtures/cloud.js';
import { startPrometheus } from './prometheus.js';

const TOKEN = 'metrics-token-for-the-prometheus-peer';
const toClose: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (toClose.length) await (toClose.pop() as () => Promise<void>)();
});

describe('Prometheus scrapes every role', () => {
  it('up for each role with the token, and http_requests_total answers how many readiness requests each one got', async () => {
    const gateway = await startTestGateway({ metricsToken: TOKEN });
    toClose.push(() => gateway.stop());
    const programs = await startTestProgramService({ plugins: [], metricsToken: TOKEN });
    toClose.push(() => programs.stop());
    const cloud = await startTestCloud({ metricsToken: TOKEN });
    toClose.push(() => cloud.runtime.stop());
    const urls = { gateway: await gateway.gateway.listen({ host: '127.0.0.1', port: 0 }), programs: programs.url, cloud: await cloud.listen('127.0.0.1', 0) };
    const sent = { gateway: 7, programs: 5, cloud: 3 };
    for (const [role, url] of Object.entries(urls)) {
      for (let i = 0; i < sent[role as keyof typeof sent]; i++) expect((await fetch(`${url}/readyz`)).status).toBe(200);
    }
    const prometheus = await startPrometheus(Object.fromEntries(Object.entries(urls).map(([role, url]) => [role, new URL(url).host])), TOKEN);
    toClose.push(() => prometheus.stop());
    await vi.waitFor(async () => {
      expect(await prometheus.query('up', 'job')).toEqual({ gateway: 1, programs: 1, cloud: 1 });
      expect(await prometheus.query('sum by (job) (http_requests_total{route="/readyz",code="200"})', 'job')).toEqual(sent);
    }, { timeout: 20_000, interval: 250 });
    // Its own scrapes were counted too, each with the token (none refused).
    expect(await prometheus.query('sum by (job) (http_requests_total{route="/metrics",code="401"})', 'job')).toEqual({});
    expect(Object.keys(await prometheus.query('process_resident_memory_bytes', 'job')).sort()).toEqual(['cloud', 'gateway', 'programs']);
  });

  it('PromQL answers the machines by state, the deployments made, the calls relayed and the tokens checked', async () => {
    // Gateway: two active machines and one inactive.
    const gateway = await startTestGateway({ metricsToken: TOKEN, machines: [simMachine('M01'), simMachine('M02'), simMachine('IDLE', { isActive: false })] });
    toClose.push(() => gateway.stop());
    // Program service: two deployments through the real API, one to each machine.
    const programs = await startTestProgramService({
      plugins: [TEST_ACCOUNTS, vaultPlugin, auditApiPlugin, gatewaysPlugin, assignmentsPlugin, deploymentsPlugin, webhooksPlugin],
      metricsToken: TOKEN, env: { PROGRAMS_ADMIN_PASSWORD: TEST_PROGRAMS_ADMIN_PASSWORD }, localGateway: new InProcessGatewayLink(gateway.gateway.context.interfaces),
    });
    toClose.push(() => programs.stop());
    const plant = await scopedPlant(programs, await login(programs, 'admin', TEST_PROGRAMS_ADMIN_PASSWORD));
    const deployed = [await plant.deploy(await plant.publish(plant.libraryA, 'SHAFT'), plant.machineA), await plant.deploy(await plant.publish(plant.libraryB, 'FLANGE'), plant.machineB)];
    expect(deployed.map((d) => d.status)).toEqual(['Succeeded', 'Succeeded']);
    // Cloud: one linked gateway, three calls relayed to it, one call with a token it does not know.
    const cloud = await startTestCloud({ metricsToken: TOKEN });
    toClose.push(() => cloud.runtime.stop());
    const { token } = await cloud.tokens.create('north');
    const link: MqttClient = await lightLink(cloud.brokerUrl as string, token);
    toClose.push(async () => void (await link.endAsync()));
    await untilOnline(cloud, token);
    const cloudUrl = await cloud.listen('127.0.0.1', 0);
    const call = (accessToken: string) => fetch(`${cloudUrl}/mcp`, {
      method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', accesstoken: accessToken },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_groups', arguments: {} } }),
    });
    for (let i = 0; i < 3; i++) expect((await call(token)).status).toBe(200);
    await call('cgw_unknown_nope');

    const urls = { gateway: await gateway.gateway.listen({ host: '127.0.0.1', port: 0 }), programs: programs.url, cloud: cloudUrl };
    const prometheus = await startPrometheus(Object.fromEntries(Object.entries(urls).map(([role, url]) => [role, new URL(url).host])), TOKEN);
    toClose.push(() => prometheus.stop());
    await vi.waitFor(async () => {
      expect(await prometheus.query('up', 'job')).toEqual({ gateway: 1, programs: 1, cloud: 1 });
      // The gateway's machines: three in all, one of them inactive (its connection stopped).
      expect(await prometheus.query('sum by (job) (gateway_machines)', 'job')).toEqual({ gateway: 3 });
      expect(await prometheus.query('sum by (job) (gateway_machines{state="inactive"})', 'job')).toEqual({ gateway: 1 });
      expect(await prometheus.query('sum by (job) (gateway_machine_connections{state="stopped"})', 'job')).toEqual({ gateway: 1 });
      // The deployments the test made, by status and purpose, and each one's transfer observed.
      expect(await prometheus.query('sum by (status) (programs_deployments{purpose="deploy"})', 'status')).toEqual({ Succeeded: 2 });
      expect(await prometheus.query('sum by (job) (programs_deployment_transfer_seconds_count)', 'job')).toEqual({ programs: 2 });
      // The calls the cloud relayed, their answers' bytes, and the tokens it checked.
      expect(await prometheus.query('sum by (outcome) (cloud_relayed_calls_total)', 'outcome')).toEqual({ ok: 3 });
      expect(await prometheus.query('sum by (job) (cloud_relay_round_trip_seconds_count)', 'job')).toEqual({ cloud: 3 });
      expect(await prometheus.query('sum by (job) (cloud_gateways_connected)', 'job')).toEqual({ cloud: 1 });
      expect(await prometheus.query('sum by (result) (cloud_token_checks_total{kind="gateway_token"})', 'result')).toMatchObject({ invalid: 1 });
    }, { timeout: 30_000, interval: 500 });
    expect((await prometheus.query('sum by (job) (cloud_relay_answer_bytes_total)', 'job')).cloud).toBeGreaterThan(0);
    expect((await prometheus.query('sum by (job) (programs_audit_records)', 'job')).programs).toBeGreaterThan(0);
  }, 120_000);
});
