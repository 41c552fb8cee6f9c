import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { CncStatus, ExecutionState } from '../../../core/driver-seam/driver.js';
import { GatewayError } from '../../../core/interfaces/errors.js';
import { opcuaDriver, type OpcuaClient } from '../../../drivers/opcua/index.js';
import { startOpcuaServer, type RunningOpcuaSimulator } from '../../../drivers/opcua/simulator.js';
import { SIMULATOR_NS } from '../../../drivers/opcua/simulator-space.js';
import { LATHE, MILL, opcuaClient, rejection } from './helpers.js';

const PASSWORD = 'S3cret-operator-pass';
const dataDir = mkdtempSync(join(tmpdir(), 'opcua-client-test-'));
let full: RunningOpcuaSimulator;
let noneOnly: RunningOpcuaSimulator;
const open: OpcuaClient[] = [];

/** A client of the full simulator (or `port`), closed after the file. */
function client(options: Parameters<typeof opcuaClient>[2] = {}, password?: string, port = full.port): OpcuaClient {
  const c = opcuaClient(port, dataDir, options, password);
  open.push(c);
  return c;
}

/** The machine config the simulator hands out for MC-1: model plus its vendor nodes. */
function simulatorOptions(): Record<string, unknown> {
  return (full.machineConfig(MILL) as { driverOptions: Record<string, unknown> }).driverOptions;
}

const CHANNEL_STATE_OF: Record<ExecutionState, string> = {
  RUNNING: 'Active', HOLD: 'Interrupted', STOPPED: 'Interrupted', RESET: 'Reset', EMERGENCY: 'Reset',
};

beforeAll(async () => {
  [full, noneOnly] = await Promise.all([
    startOpcuaServer({ machines: [MILL, LATHE], users: [{ userName: 'operator', password: PASSWORD }] }),
    startOpcuaServer({ machines: [MILL], securityModes: ['None'] }),
  ]);
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

afterAll(async () => {
  await Promise.all([full?.close(), noneOnly?.close()]);
});

describe('opcua mapping of the machine tool model', () => {
  it('finds the machine under Objects/Machines by browsing and maps its status, alarms, parts and tools', { timeout: 30_000 }, async () => {
    // The file's first connect creates the client certificate, which takes seconds on a busy host.
    const c = client({ machine: 'MC-1', connectTimeoutMs: 20_000 });
    await c.connect();
    expect(c.layout?.machine).toBe('MC-1');
    expect([...c.families].sort()).toEqual(['alarm', 'count', 'currentProgram', 'programFiles', 'programList', 'status', 'toolLife']);
    const model = full.machine('MC-1');
    await expect.poll(async () => (await c.read('status')).cncStatus, { timeout: 3_000 }).toBe(CHANNEL_STATE_OF[model.status().adjustedStatus]);
    const status: CncStatus = await c.read('status');
    expect(status.program).toBe(model.status().program);
    expect(['AUTO', 'MDI', 'JOG', 'HANDLE', 'REF', 'REMOTE', 'UNKNOWN']).toContain(status.mode);
    expect(status.alarmLevel).toBe(model.status().alarmLevel);
    const alarms = await c.read('alarm');
    expect(alarms.map((a) => a.code).sort()).toEqual(model.alarms().map((a) => a.code).sort());
    const count = await c.read('count');
    expect(Math.abs(count.partsTotal - model.count().partsTotal)).toBeLessThanOrEqual(1);
    const tools = await c.read('toolLife');
    expect(tools.map((t) => [t.toolNum, t.groupNum, t.limit])).toEqual(model.toolLife().map((t) => [t.toolNum, t.groupNum, t.limit]));
    expect(await c.read('toolLife', { toolNum: tools[0]?.toolNum ?? -1 })).toHaveLength(1);
  });

  it('selects a machine by BrowseName or Identification ComponentName, the first by default, and rejects an unknown one', async () => {
    const byDefault = client();
    await byDefault.connect();
    expect(byDefault.layout?.machine).toBe('MC-1');
    const lathe = client({ machine: 'LATHE-2' });
    await lathe.connect();
    expect(lathe.layout?.machine).toBe('LATHE-2');
    expect((await lathe.read('status')).program).toBe(full.machine('LATHE-2').status().program);
    const missing = await rejection(client({ machine: 'NO-SUCH' }).connect());
    expect(missing.message).toContain("no machine 'NO-SUCH'");
  });

  it('reads the families the NodeId map adds, with nsu= NodeIds resolved on the server', async () => {
    const c = client(simulatorOptions());
    await c.connect();
    expect([...c.families].sort()).toEqual(['alarm', 'count', 'currentProgram', 'feedAndSpindle', 'programFiles', 'programList', 'status', 'timeData', 'toolLife', 'toolNumber']);
    const fs = await c.read('feedAndSpindle');
    expect(fs.feedOverride).toBeGreaterThan(0);
    expect(fs.spindleOverride).toBeGreaterThan(0);
    const tool = await c.read('toolNumber');
    expect(full.machine('MC-1').tools.map((t) => t.toolNum)).toContain(tool.toolNumber);
    const time = await c.read('timeData');
    expect(time.powerOnTime % 3600).toBe(0);
    expect(time.operatingTime).toBeGreaterThan(0);
  });

  it('lets an explicit NodeId override the model', async () => {
    const c = client({ nodes: { partsTotal: `nsu=${SIMULATOR_NS};s=MC-1.Production.ProductionPlan.Job1.PartsCompleted` } });
    await c.connect();
    const count = await c.read('count');
    expect(count.partsTotal).toBe(count.partCount);
    expect(count.partsTotal).not.toBe(full.machine('MC-1').count().partsTotal);
  });

  it('rejects a family it cannot map, naming the driver and the family', async () => {
    const c = client();
    await c.connect();
    const position = await rejection(c.read('position'));
    expect(position.errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    expect(position.message).toContain("driver 'opcua' does not support item family 'position'");
    expect((await rejection(c.read('feedAndSpindle'))).errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
  });

  it('rejects bad driverOptions naming the field and the accepted values', () => {
    const problems = (raw: unknown) => opcuaDriver.configSchema.safeParse(raw).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];
    expect(problems({ securityMode: 'Encrypt' }).join()).toMatch(/securityMode: securityMode must be one of None, Sign, SignAndEncrypt/);
    expect(problems({ securityPolicy: 'Basic128Rsa15' }).join()).toMatch(/securityPolicy must be one of Basic256Sha256/);
    expect(problems({ nodes: { channelState: 'Channel1.State' } }).join()).toMatch(/nodes\.channelState: nodes\.channelState must be a NodeId/);
    expect(problems({ nodes: { spindleLoad: 'ns=2;i=1' } }).join()).toMatch(/nodes must be an object whose keys are among channelState/);
    expect(problems({ publishingIntervalMs: 10 }).join()).toMatch(/publishingIntervalMs must be at least 50/);
    expect(problems({ alarmSeverity: 900, emergencySeverity: 800 }).join()).toMatch(/emergencySeverity must be at least alarmSeverity/);
  });
});

describe('opcua subscriptions and polling', () => {
  it('delivers a value change through the subscription without polling', async () => {
    const c = client(simulatorOptions());
    await c.connect();
    expect(c.stats.subscriptionsCreated).toBe(1);
    await c.read('feedAndSpindle');
    const polled = c.stats.polledReads;
    const notified = c.stats.notifications;
    full.pin('MC-1', 'feedOverride', 42);
    try {
      await expect.poll(async () => (await c.read('feedAndSpindle')).feedOverride, { timeout: 3_000 }).toBe(42);
    } finally {
      full.pin('MC-1', 'feedOverride', undefined);
    }
    expect(c.stats.polledReads).toBe(polled);
    expect(c.stats.notifications).toBeGreaterThan(notified);
  });

  it('polls while a monitored value is Bad and recreates the subscription once it is Good again', async () => {
    const c = client();
    await c.connect();
    full.pin('MC-1', 'channelState', 'bad');
    try {
      const outcome = () => c.read('status').then(() => 'ok', (error: unknown) => (error instanceof GatewayError ? error.errorName : String(error)));
      await expect.poll(outcome, { timeout: 3_000 }).toBe('DRIVER_REQUEST_FAILED');
    } finally {
      full.pin('MC-1', 'channelState', undefined);
    }
    await expect.poll(async () => {
      await c.read('status');
      return c.stats.subscriptionsCreated;
    }, { timeout: 6_000, interval: 200 }).toBeGreaterThanOrEqual(2);
    await expect.poll(async () => {
      const before = c.stats.polledReads;
      await c.read('status');
      return c.stats.polledReads - before;
    }, { timeout: 3_000 }).toBe(0);
  });

  it('falls back to the Read service when subscriptions are off', async () => {
    const c = client({ subscription: false });
    await c.connect();
    await c.read('status');
    await c.read('count');
    expect(c.stats.subscriptionsCreated).toBe(0);
    expect(c.stats.polledReads).toBe(2);
  });

  it('replaces the session on every connect and releases it on close', async () => {
    const before = full.sessions();
    const c = client();
    await c.connect();
    await c.connect();
    expect(full.sessions().created).toBe(before.created + 2);
    await expect.poll(() => full.sessions().open).toBe(before.open + 1);
    await c.close();
    await c.close();
    await expect.poll(() => full.sessions().open).toBe(before.open);
    expect((await rejection(c.read('status'))).errorName).toBe('MACHINE_NOT_CONNECTED');
  });
});

describe('opcua security', () => {
  it.each([
    ['Sign', 'Basic256Sha256'],
    ['SignAndEncrypt', 'Basic256Sha256'],
    ['SignAndEncrypt', 'Aes128_Sha256_RsaOaep'],
    ['SignAndEncrypt', 'Aes256_Sha256_RsaPss'],
  ] as const)('connects with %s / %s', async (securityMode, securityPolicy) => {
    const c = client({ securityMode, securityPolicy });
    await c.connect();
    expect((await c.read('status')).cncStatus).toMatch(/^(Active|Interrupted|Reset)$/);
  });

  it('fails closed when the server does not offer the requested mode: no fallback to None, no session', async () => {
    const error = await rejection(client({ securityMode: 'SignAndEncrypt' }, undefined, noneOnly.port).connect());
    expect(error.errorName).toBe('MACHINE_NOT_CONNECTED');
    expect(error.message).toContain("securityMode 'SignAndEncrypt'");
    expect(error.message).toContain('refusing to connect with weaker security');
    expect(noneOnly.sessions().created).toBe(0);
  });

  it('logs in with user name and password over SignAndEncrypt', async () => {
    const before = full.sessions().created;
    const c = client({ securityMode: 'SignAndEncrypt', userName: 'operator' }, PASSWORD);
    await c.connect();
    expect(full.sessions().created).toBe(before + 1);
    expect((await c.read('status')).cncStatus).toMatch(/^(Active|Interrupted|Reset)$/);
  });

  it('rejects a wrong password without revealing it', async () => {
    const wrong = 'Wr0ng-password-value';
    const error = await rejection(client({ userName: 'operator' }, wrong).connect());
    expect(error.errorName).toBe('MACHINE_NOT_CONNECTED');
    expect(error.message).toContain("rejected the user 'operator'");
    expect(error.message).not.toContain(wrong);
    expect(JSON.stringify(error.toBody())).not.toContain(wrong);
  });
});
