/**
 * The MTConnect driver reading an SHDR adapter (the adapter simulator playing
 * the recorded lathe): every family as the recording says, by the names
 * table or a Devices file; the heartbeat; programs refused; options checked.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mtconnectDriver } from '../../../drivers/mtconnect/index.js';
import { LATHE_DEVICES } from '../../../drivers/mtconnect/replay.js';
import { ShdrConnection } from '../../../drivers/mtconnect/shdr-connection.js';
import { startMtconnectAdapterSimulator, type RunningAdapterSimulator } from '../../../drivers/mtconnect/simulator.js';
import { until } from '../../fixtures/until.js';
import { AT_START, START, expectAtStart, mtconnectClient, rejection } from './helpers.js';

describe('mtconnect driver: an SHDR adapter', () => {
  let sim: RunningAdapterSimulator;
  beforeAll(async () => {
    sim = await startMtconnectAdapterSimulator({ machines: [START], heartbeatMs: 500 });
  });
  afterAll(async () => {
    await sim.close();
  });

  // The common names have no axis positions (the gateway reads none): the adapter's Xpos and Zpos are unknown to them.
  for (const [how, options, unknown] of [['the common names', {}, 2], ['a Devices file', { devicesFile: LATHE_DEVICES }, 0]] as const) {
    it(`reads every family as the recording says, with ${how}`, async () => {
      const client = mtconnectClient(sim.port, options);
      try {
        await client.connect();
        const families = Object.keys(AT_START) as Array<keyof typeof AT_START>;
        await until('every family served', () => [...client.families], (f) => families.every((family) => f.includes(family)), 5_000);
        await expectAtStart(client);
        expect(client.families.has('position')).toBe(false);
        expect(client.inputProblems()).toEqual(unknown ? { unknownDataItem: { count: unknown, last: expect.stringMatching(/data item '[XZ]pos' is not in the device's model/) } } : {});
      } finally {
        await client.close();
      }
    });
  }

  it('with the names table, serves a family once the adapter sent its data items; with a Devices file, from the start', async () => {
    const names = mtconnectClient(sim.port, {});
    const file = mtconnectClient(sim.port, { devicesFile: LATHE_DEVICES });
    try {
      expect([...names.families]).toEqual(['status']);
      expect([...file.families].sort()).toEqual(['alarm', 'count', 'feedAndSpindle', 'load', 'status', 'timeData', 'toolLife', 'toolNumber']);
    } finally {
      await names.close();
      await file.close();
    }
  });

  it('refuses program transfers up front, saying MTConnect is read-only', async () => {
    const client = mtconnectClient(sim.port, {});
    try {
      const error = await rejection(client.uploadProgram('//CNC_MEM/', 'O1000', Buffer.from('%\n%\n')));
      expect(error.errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
      expect(error.message).toContain('MTConnect is read-only');
      expect((await rejection(client.downloadProgram('//CNC_MEM/', 'O1000'))).errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
      expect((await rejection(client.read('programList'))).errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    } finally {
      await client.close();
    }
  });

  it('takes the heartbeat the adapter\'s PONG asks for, and keeps the link while PONGs come', async () => {
    const client = mtconnectClient(sim.port, {});
    try {
      await client.connect();
      await until('PONG', () => (client.source as unknown as { connection?: ShdrConnection }).connection?.heartbeatMs, (ms) => ms === 500, 5_000);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(client.source.alive).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('counts the link as dead after two heartbeats without data from an adapter that answered PING once', async () => {
    const server = net.createServer((socket) => {
      socket.once('data', () => socket.write(`* PONG 100\n${new Date().toISOString()}|execution|READY\n`));
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = mtconnectClient((server.address() as net.AddressInfo).port, {});
    const lost: string[] = [];
    client.onConnectionLost(({ reason }) => lost.push(reason));
    try {
      await client.connect();
      await until('the loss', () => lost, (l) => l.length > 0, 3_000);
      expect(lost).toEqual([expect.stringMatching(/sent nothing for 0\.2 s, two of its 100 ms heartbeats$/)]);
    } finally {
      await client.close();
      server.close();
    }
  });
});

describe('mtconnect driverOptions', () => {
  const problems = (raw: unknown) => mtconnectDriver.configSchema.safeParse(raw).error?.issues.map((i) => `${i.path.join('.')}: ${i.message}`) ?? [];

  it('accepts an adapter, an agent URL, or neither (the machine\'s ip and port as an adapter); with every default', () => {
    expect(problems({})).toEqual([]);
    expect(problems({ adapter: 'cell-4.local' })).toEqual([]);
    expect(problems({ adapter: '[fe80::1]:7879' })).toEqual([]);
    expect(problems({ agentUrl: 'https://agent.plant:5000/prefix', device: 'VMC-3Axis', agent: { mode: 'poll', intervalMs: 250 } })).toEqual([]);
    const parsed = mtconnectDriver.configSchema.parse({});
    expect(parsed).toMatchObject({ connectTimeoutMs: 3000, requestTimeoutMs: 2000, legacyTimeoutMs: 60_000, maxLineBytes: 262_144, maxFieldsPerLine: 4096, maxAssetBytes: 1_048_576, maxAssets: 1000, commonNames: true });
  });

  it('names the field and what it accepts for each mistake', () => {
    expect(problems({ adapter: 'host:99999' })).toEqual(['adapter: adapter port must be 1-65535; found 99999']);
    expect(problems({ adapter: 'a:1', agentUrl: 'http://b:5000' })).toEqual(['agentUrl: give adapter (an SHDR adapter) or agentUrl (an MTConnect agent), not both']);
    expect(problems({ agentUrl: 'ftp://x' })).toEqual(['agentUrl: agentUrl must start with http:// or https://']);
    expect(problems({ agentUrl: 'http://u:secret@x:5000' })).toEqual(['agentUrl: agentUrl must not carry credentials']);
    expect(problems({ agentUrl: 'http://x:5000', devicesFile: LATHE_DEVICES })).toEqual(["devicesFile: devicesFile applies to an adapter; an agent's /probe describes its data items"]);
    expect(problems({ dataItems: { exec: 'execution' } })).toEqual(['dataItems.exec: a data item must be \'TYPE\', \'TYPE:SUBTYPE\' or { type, subType, category, component, units }']);
    expect(problems({ maxLineBytes: 10 })).toEqual(['maxLineBytes: maxLineBytes must be at least 1024']);
    expect(problems({ agent: { mode: 'push' } })).toEqual(['agent.mode: agent.mode must be stream or poll']);
  });

  it('reads a Devices file when the options are parsed, so a missing or wrong one is reported at start with its path', () => {
    expect(problems({ devicesFile: '/nonexistent/Devices.xml' })).toEqual(["devicesFile: cannot read devicesFile '/nonexistent/Devices.xml' (ENOENT)"]);
    expect(problems({ devicesFile: LATHE_DEVICES, device: 'mill' })).toEqual([`devicesFile: devicesFile '${LATHE_DEVICES}' has no device 'mill'; it has 'lathe' (uuid cnc-gateway-recorded-lathe)`]);
    expect(problems({ devicesFile: new URL('./helpers.ts', import.meta.url).pathname })).toEqual([expect.stringMatching(/^devicesFile: devicesFile '.*helpers\.ts': not well-formed XML/)]);
  });
});
