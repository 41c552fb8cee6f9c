/**
 * A real Prometheus scrapes the three roles' /metrics with the metrics
 * token, and PromQL over what it stored answers what the test did: the
 * readiness requests it sent to each role.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startTestGateway } from '../fixtures/gateway.js';
import { startTestProgramService } from '../fixtures/programs.js';
import { startTestCloud } from '../fixtures/cloud.js';
import { startPrometheus } from './prometheus.js';

const TOKEN = 'metrics-token-for-the-prometheus-peer';
const toClose: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (toClose.length) await (toClose.pop() as () => Promise<void>)();
});

describe('Prometheus scrapes every role', () => {
  it('up for each role with the token, and http_requests_total answers how many readiness requests each one got', async () => {
    const previous = process.env.METRICS_TOKEN;
    process.env.METRICS_TOKEN = TOKEN;
    toClose.push(async () => {
      if (previous === undefined) delete process.env.METRICS_TOKEN;
      else process.env.METRICS_TOKEN = previous;
    });
    const gateway = await startTestGateway();
    toClose.push(() => gateway.stop());
    const programs = await startTestProgramService({ plugins: [] });
    toClose.push(() => programs.stop());
    const cloud = await startTestCloud();
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
});
