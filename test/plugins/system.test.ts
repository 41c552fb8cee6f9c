import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IntervalHistogram } from 'node:perf_hooks';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { GatewayConfig } from '../../config/schema.js';
import { parseConfig } from '../../core/roles/index.js';
import { Gateway } from '../../core/roles/gateway/gateway.js';
import { DRIVERS } from '../../drivers/registry.js';
import { SimulatorClient } from '../../drivers/simulator/index.js';
import { placeDefaults, TEST_PLUGINS } from '../fixtures/gateway.js';
import { simMachine } from '../fixtures/gateway.js';

// Every event-loop histogram the gateway creates, to check that stop() disables it.
const histograms = vi.hoisted(() => [] as IntervalHistogram[]);
vi.mock('node:perf_hooks', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:perf_hooks')>();
  return {
    ...actual,
    monitorEventLoopDelay: (options?: Parameters<typeof actual.monitorEventLoopDelay>[0]) => {
      const histogram = actual.monitorEventLoopDelay(options);
      histograms.push(histogram);
      return histogram;
    },
  };
});

interface Response {
  status: number;
  body: { errorCode: number; errorMsg: string; data?: unknown; hint?: string };
  raw: string;
}

interface SystemGateway {
  gateway: Gateway;
  dataDir: string;
  get(url: string, headers?: Record<string, string>): Promise<Response>;
  /** `data` of a successful GET. */
  data<T = Record<string, unknown>>(url: string): Promise<T>;
  stop(): Promise<void>;
}

interface StartOptions {
  dataDir?: string;
  now?: () => number;
  /** Changes the parsed config before the gateway starts, e.g. to plant a secret. */
  adjust?: (config: GatewayConfig) => void;
}

/** A real gateway with the system plugin (once in the list, whether or not the gateway's plugin list registers it yet). */
async function startSystemGateway(raw: Record<string, unknown> = {}, options: StartOptions = {}): Promise<SystemGateway> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'gw-system-'));
  const config = parseConfig({
    logLevel: 'silent',
    // These tests are about the system interfaces, not authentication; GW-82 turns it back on.
    security: { securityControl: false },
    ...placeDefaults(raw, dataDir),
    ...raw,
  });
  options.adjust?.(config);
  const plugins = TEST_PLUGINS;
  const gateway = await Gateway.create({
    config,
    drivers: DRIVERS,
    plugins,
    logger: pino({ level: 'silent' }),
    ...(options.now ? { now: options.now } : {}),
  });
  const get = async (url: string, headers: Record<string, string> = {}): Promise<Response> => {
    const res = await gateway.http.inject({ method: 'GET', url, headers });
    return { status: res.statusCode, body: res.json(), raw: res.body };
  };
  return {
    gateway,
    dataDir,
    get,
    async data<T>(url: string) {
      const res = await get(url);
      expect(res.status, res.raw).toBe(200);
      expect(res.body.errorCode).toBe(0);
      return res.body.data as T;
    },
    stop: () => gateway.stop(),
  };
}

let gw: SystemGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

const isIsoWithOffset = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/;

/** The UTC offset of `zone` at `ms`, as `+02:00`, straight from Intl. */
function intlOffset(ms: number, zone: string): string {
  const name = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })
    .formatToParts(new Date(ms))
    .find((p) => p.type === 'timeZoneName')?.value;
  // Intl writes UTC itself as plain "GMT".
  return name === 'GMT' ? '+00:00' : (name ?? '').replace('GMT', '');
}

describe('system interfaces', () => {
  it('GW-14 gateway-info keeps its gatewayID across a restart on the same data dir and never carries an accessToken', async () => {
    const token = 'cloud-T0ken-s3cret';
    const plantToken = (config: GatewayConfig) => {
      // As if a later schema held cloud credentials next to the gateway identity.
      Object.assign((config as unknown as { gateway: object }).gateway, { accessToken: token });
      Object.assign(config, { cloud: { accessToken: token, url: 'mqtt://cloud.invalid' } });
    };
    gw = await startSystemGateway({ gateway: { name: 'line-3', alias: 'Hall B' } }, { adjust: plantToken });
    const dataDir = gw.dataDir;
    const first = await gw.get('/api/system/gateway-info');
    expect(first.status).toBe(200);
    const info = first.body.data as Record<string, unknown>;
    expect(info).toEqual({
      name: 'line-3',
      alias: 'Hall B',
      gatewayID: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      version: gw.gateway.context.version,
      startedAtMs: gw.gateway.context.startedAt,
      startedAt: expect.stringMatching(isIsoWithOffset),
      cloud: { configured: false, connected: false },
      northbound: { targets: [] },
    });
    expect(readFileSync(join(dataDir, 'gateway-id'), 'utf8').trim()).toBe(info.gatewayID);
    expect(first.raw).not.toMatch(/accessToken/i);
    expect(first.raw).not.toContain(token);
    await gw.stop();

    gw = await startSystemGateway({}, { dataDir, adjust: plantToken });
    const second = await gw.get('/api/system/gateway-info');
    expect((second.body.data as Record<string, unknown>).gatewayID).toBe(info.gatewayID);
    expect(second.raw).not.toMatch(/accessToken/i);
    expect(second.raw).not.toContain(token);

    // A different data dir is a different gateway.
    const other = await startSystemGateway();
    try {
      expect((await other.data('/api/system/gateway-info')).gatewayID).not.toBe(info.gatewayID);
    } finally {
      await other.stop();
    }
  });

  it('a damaged gateway-id file stops the start, naming the file, instead of silently changing identity', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gw-system-'));
    writeFileSync(join(dataDir, 'gateway-id'), 'not-a-uuid\n');
    await expect(startSystemGateway({}, { dataDir })).rejects.toThrow(/gateway-id must hold a UUID; found 'not-a-uuid'/);
  });

  it('info reports product, versions, platform, uptime, plugins, driver schemes and fleet counts', async () => {
    gw = await startSystemGateway({
      machines: [simMachine('A'), simMachine('B', { isActive: false })],
      groups: [{ groupID: 'G1', name: 'Line 1', machineIDs: ['A', 'B'] }],
    });
    const info = await gw.data('/api/system/info');
    expect(info).toEqual({
      productName: 'CNC machine gateway',
      version: gw.gateway.context.version,
      nodeVersion: process.version,
      platform: process.platform,
      arch: process.arch,
      osRelease: expect.any(String),
      uptimeMs: expect.any(Number),
      startedPlugins: expect.arrayContaining(['auth', 'machine-actors', 'gateway-api', 'system']),
      driverSchemes: expect.arrayContaining(['simulator']),
      machineCount: 2,
      activeMachineCount: 1,
      groupCount: 1,
    });
    expect(info.uptimeMs).toBeGreaterThanOrEqual(0);
  });

  it('license-info is truthful for an open-source build: Apache-2.0, community, no limits, no expiry', async () => {
    gw = await startSystemGateway();
    expect(await gw.data('/api/system/license-info')).toEqual({
      license: 'Apache-2.0',
      edition: 'community',
      machineLimit: null,
      expires: null,
      features: expect.arrayContaining(['machine-fleet', 'history', 'http-api']),
    });
  });

  it('service-status counts actors by connection state, an inactive machine as stopped, and reports the writer queue and database files', async () => {
    const slowRetry = { connection: { backoffBaseMs: 60_000, backoffMaxMs: 60_000 } };
    gw = await startSystemGateway({
      machines: [simMachine('ON'), simMachine('DOWN', slowRetry), simMachine('OFF', { isActive: false })],
    });
    const g = gw;
    await vi.waitFor(() => {
      expect(g.gateway.fleet.connectionState('ON')).toBe('online');
      expect(g.gateway.fleet.connectionState('DOWN')).toBe('online');
    }, { timeout: 5000, interval: 20 });
    (g.gateway.fleet.client('DOWN') as SimulatorClient).loseConnection();
    await vi.waitFor(() => expect(g.gateway.fleet.connectionState('DOWN')).toBe('backoff'), { timeout: 5000, interval: 20 });

    const status = await g.data<Record<string, Record<string, unknown>>>('/api/system/service-status');
    expect(status.fleet).toEqual({
      status: 'running',
      machineCount: 3,
      actorsByState: { online: 1, connecting: 0, backoff: 1, offline: 0, stopped: 1 },
    });
    expect(status.http).toEqual({ status: 'not-listening', address: null, port: null });
    expect(status.historyWriter).toEqual({
      status: 'running',
      pendingRows: expect.any(Number),
      inFlightRows: expect.any(Number),
      rowsWritten: expect.any(Number),
      flushes: expect.any(Number),
      failedFlushes: 0,
      droppedRows: 0,
      lastSeq: expect.any(Number),
    });
    // One snapshot of the queue (samples keep arriving, so it is not compared with a later read): on a new database,
    // every row numbered so far is waiting, being written or written.
    const w = status.historyWriter as Record<string, number>;
    expect(w.lastSeq).toBeGreaterThan(0);
    expect((w.pendingRows as number) + (w.inFlightRows as number) + (w.rowsWritten as number)).toBe(w.lastSeq);
    expect(status.database).toEqual({ status: 'open', file: 'gateway.db', sizeBytes: expect.any(Number), walSizeBytes: expect.any(Number) });
    expect(status.database?.sizeBytes).toBeGreaterThan(0);
  });

  it('service-status shows the HTTP port once the gateway listens', async () => {
    gw = await startSystemGateway();
    await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
    const status = await gw.data<{ http: { status: string; address: string; port: number } }>('/api/system/service-status');
    expect(status.http.status).toBe('listening');
    expect(status.http.address).toBe('127.0.0.1');
    expect(status.http.port).toBeGreaterThan(0);
  });

  it('time-zone in Europe/Berlin reports the offset Intl gives for the same instant', async () => {
    gw = await startSystemGateway({ gateway: { timeZone: 'Europe/Berlin' } });
    const zone = await gw.data<{ nowMs: number; now: string; timeZone: string; utcOffset: string; utcOffsetMinutes: number; dstInEffect: boolean }>(
      '/api/system/time-zone',
    );
    const expected = intlOffset(zone.nowMs, 'Europe/Berlin');
    expect(zone.timeZone).toBe('Europe/Berlin');
    expect(zone.utcOffset).toBe(expected);
    expect(zone.utcOffsetMinutes).toBe(expected === '+02:00' ? 120 : 60);
    expect(zone.dstInEffect).toBe(expected === '+02:00');
    expect(zone.now).toMatch(isIsoWithOffset);
    expect(zone.now.endsWith(expected)).toBe(true);
    expect(Math.abs(Date.parse(zone.now) - zone.nowMs)).toBeLessThan(1000);
  });

  it.each([
    ['summer', Date.UTC(2026, 6, 1, 10, 30), '+02:00', 120, true, '2026-07-01T12:30:00+02:00'],
    ['winter', Date.UTC(2026, 0, 15, 10, 30), '+01:00', 60, false, '2026-01-15T11:30:00+01:00'],
  ])('time-zone in Europe/Berlin in %s uses the gateway clock', async (_season, at, utcOffset, utcOffsetMinutes, dstInEffect, now) => {
    expect(intlOffset(at, 'Europe/Berlin')).toBe(utcOffset);
    gw = await startSystemGateway({ gateway: { timeZone: 'Europe/Berlin' } }, { now: () => at });
    expect(await gw.data('/api/system/time-zone')).toEqual({
      nowMs: at,
      now,
      timeZone: 'Europe/Berlin',
      utcOffsetMinutes,
      utcOffset,
      standardUtcOffsetMinutes: 60,
      dstInEffect,
    });
  });

  it('time-zone handles a zone west of UTC with a half-hour offset and DST on the southern hemisphere', async () => {
    // St. John's, Newfoundland: -03:30 standard; Sydney: DST in January.
    gw = await startSystemGateway({ gateway: { timeZone: 'America/St_Johns' } }, { now: () => Date.UTC(2026, 0, 15, 12) });
    expect(await gw.data('/api/system/time-zone')).toMatchObject({ utcOffset: '-03:30', utcOffsetMinutes: -210, dstInEffect: false });
    await gw.stop();
    gw = await startSystemGateway({ gateway: { timeZone: 'Australia/Sydney' } }, { now: () => Date.UTC(2026, 0, 15, 12) });
    expect(await gw.data('/api/system/time-zone')).toMatchObject({ utcOffset: '+11:00', standardUtcOffsetMinutes: 600, dstInEffect: true });
  });

  it('hardware-resources reports CPU, memory, disk and event-loop delay with explicit units', async () => {
    gw = await startSystemGateway();
    const g = gw;
    type Hardware = {
      cpu: { count: number; model: string | null; loadAverage: Record<string, number> };
      memory: { totalBytes: number; freeBytes: number };
      process: Record<string, number>;
      disk: { totalBytes: number | null; freeBytes: number | null; availableBytes: number | null };
      eventLoopDelay: { samples: number; p50Ms: number | null; p99Ms: number | null; maxMs: number | null; meanMs: number | null; resolutionMs: number };
    };
    // The monitor needs one resolution interval before its first sample.
    const hw = await vi.waitFor(
      async () => {
        const data = await g.data<Hardware>('/api/system/hardware-resources');
        expect(data.eventLoopDelay.samples).toBeGreaterThan(0);
        return data;
      },
      { timeout: 5000, interval: 20 },
    );
    expect(hw.cpu.count).toBeGreaterThan(0);
    expect(Object.keys(hw.cpu.loadAverage).sort()).toEqual(['fifteenMinutes', 'fiveMinutes', 'oneMinute']);
    expect(hw.memory.totalBytes).toBeGreaterThan(hw.memory.freeBytes);
    expect(hw.memory.freeBytes).toBeGreaterThan(0);
    expect(Object.keys(hw.process).sort()).toEqual(['cpuPercent', 'cpuSystemMs', 'cpuUserMs', 'heapTotalBytes', 'heapUsedBytes', 'rssBytes', 'uptimeMs']);
    expect(hw.process.rssBytes).toBeGreaterThan(1024 * 1024);
    expect(hw.process.heapUsedBytes).toBeLessThanOrEqual(hw.process.heapTotalBytes ?? 0);
    expect(hw.process.cpuPercent).toBeGreaterThan(0);
    expect(hw.disk.totalBytes).toBeGreaterThan(0);
    expect(hw.disk.availableBytes).toBeLessThanOrEqual(hw.disk.freeBytes ?? -1);
    expect(hw.disk.freeBytes).toBeLessThanOrEqual(hw.disk.totalBytes ?? -1);
    const loop = hw.eventLoopDelay;
    expect(loop.resolutionMs).toBe(10);
    expect(loop.p50Ms).toBeGreaterThanOrEqual(0);
    expect(loop.p99Ms).toBeGreaterThanOrEqual(loop.p50Ms ?? Infinity);
    expect(loop.maxMs).toBeGreaterThanOrEqual(loop.p99Ms ?? Infinity);
    // The resolution is subtracted: an idle test loop is far below a second of delay.
    expect(loop.p50Ms).toBeLessThan(1000);
  });

  it('network-adapters lists every OS adapter with its addresses', async () => {
    gw = await startSystemGateway();
    const adapters = await gw.data<{ name: string; mac: string | null; addresses: Record<string, unknown>[] }[]>('/api/system/network-adapters');
    const os = networkInterfaces();
    expect(adapters.map((a) => a.name).sort()).toEqual(Object.keys(os).sort());
    for (const adapter of adapters) {
      expect(adapter.mac === null || /^([0-9a-f]{2}:){5}[0-9a-f]{2}$/i.test(adapter.mac)).toBe(true);
      expect(adapter.mac).not.toBe('00:00:00:00:00:00');
      expect(adapter.addresses).toEqual(
        (os[adapter.name] ?? []).map((i) => ({ family: i.family, address: i.address, cidr: i.cidr, internal: i.internal })),
      );
    }
    const loopback = adapters.flatMap((a) => a.addresses).find((a) => a.address === '127.0.0.1');
    if (loopback) expect(loopback).toMatchObject({ family: 'IPv4', internal: true, cidr: '127.0.0.1/8' });
  });

  it('GW-82 product-details needs no credentials and passes the IP white list, where every other system interface is refused', async () => {
    const paths = ['gateway-info', 'info', 'license-info', 'service-status', 'time-zone', 'hardware-resources', 'network-adapters'].map((p) => `/api/system/${p}`);
    const expectPublic = async (g: SystemGateway) => {
      expect(g.gateway.context.interfaces.get('/api/misc/product-details')?.permission).toBeNull();
      const res = await g.get('/api/misc/product-details');
      expect(res.status, res.raw).toBe(200);
      expect(res.body.data).toEqual({
        productName: 'CNC machine gateway',
        version: g.gateway.context.version,
        vendor: null,
        homepage: null,
        license: 'Apache-2.0',
        apiVersions: [{ api: 'http', version: '1', basePath: '/api' }],
      });
      expect(res.raw).not.toMatch(/https?:\/\//);
    };

    // Security control on, no credentials sent.
    gw = await startSystemGateway({ security: { securityControl: true } });
    await expectPublic(gw);
    for (const path of paths) expect((await gw.get(path)).body.errorCode, path).toBe(3);
    await gw.stop();

    // The IP white list on, and the caller (inject's 127.0.0.1) not in it.
    gw = await startSystemGateway({ security: { securityControl: true }, communication: { enableIpWhiteList: true, ipWhiteList: ['10.9.9.9'] } });
    await expectPublic(gw);
    for (const path of paths) expect((await gw.get(path)).body.errorCode, path).toBe(7);
  });

  it('bad input answers 400 naming the unexpected query field', async () => {
    gw = await startSystemGateway();
    const res = await gw.get('/api/system/time-zone?zone=UTC');
    expect(res.status).toBe(400);
    expect(res.body.errorCode).toBe(2);
    expect(res.body.errorMsg).toContain('zone');
  });

  it('stopping the gateway stops the event-loop monitor', async () => {
    const before = histograms.length;
    gw = await startSystemGateway();
    const created = histograms.slice(before);
    expect(created).toHaveLength(1);
    const [histogram] = created as [IntervalHistogram];
    // enable() answers false when the histogram is already enabled, disable() when already disabled.
    expect(histogram.enable()).toBe(false);
    await gw.stop();
    gw = undefined;
    expect(histogram.disable()).toBe(false);
  });
});
