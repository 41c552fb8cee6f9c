/**
 * The cases every driver passes, run in order for each row of peers.ts
 * against one gateway reading the row's peer: connect, sample every declared
 * family in its shape, programs, peer killed, peer back, clean close.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DriverClient, ReadableFamily } from '../../../core/driver-seam/driver.js';
import { GatewayError } from '../../../core/interfaces/errors.js';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import {
  expectWentDownCleanly, freshlyOnline, handleCount, killPeer, revivePeer, type PeerFaultOptions,
} from '../../fixtures/peer-faults.js';
import { FAMILY_SHAPES, READABLE_FAMILIES } from './shapes.js';
import { ATTEMPTS, INTERVAL_MS, type PeerRow, type StartedPeer } from './peers.js';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function until(what: string, timeoutMs: number, check: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(25);
  }
}

/** The GatewayError a promise rejects with; fails the test when it resolves or rejects with anything else. */
async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError rejection, got ${String(error)}`);
  return error;
}

/**
 * Reads a family, retrying for a few seconds: a value the peer publishes on
 * its own topic (MQTT) may not have arrived yet right after connecting.
 */
async function readSoon(client: DriverClient, family: ReadableFamily): Promise<unknown> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    try {
      return await client.read(family);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(100);
    }
  }
}

/** Sockets of this process whose far end is `port` on this host: the client side of a connection to the peer. */
function socketsTo(port: number): number {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((h) => h instanceof net.Socket && h.remotePort === port && !h.destroyed).length;
}

/** Programs through `c`: listed, read and written byte for byte when the row carries them, refused otherwise. */
async function expectPrograms(row: PeerRow, c: DriverClient): Promise<void> {
  if (!row.program) {
    expect(c.families.has('programFiles')).toBe(false);
    expect((await rejection(c.downloadProgram('//CNC_MEM/USER/PATH1/', 'O1000'))).errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    expect((await rejection(c.uploadProgram('//CNC_MEM/USER/PATH1/', 'O1000', Buffer.from('%\n%\n')))).errorName).toBe('DRIVER_FAMILY_UNSUPPORTED');
    return;
  }
  const list = await c.read('programList');
  const first = list[0];
  if (!first) throw new Error(`${row.driver} lists no program`);
  expect((await c.downloadProgram(first.dir, first.name)).length).toBe(first.size);
  const { name, content } = row.program;
  await c.uploadProgram(first.dir, name, content);
  expect((await c.downloadProgram(first.dir, name)).equals(content)).toBe(true);
  expect((await c.read('programList')).find((p) => p.name === name)).toMatchObject({ dir: first.dir, size: content.length });
}

/** Defines the suite's cases for one row. */
export function conformanceCases(row: PeerRow): void {
  describe(`driver ${row.driver}${row.label ? ` (${row.label})` : ''}`, () => {
    let started: StartedPeer;
    let tg: TestGateway | undefined;
    let timersBefore = 0;
    /** Sockets to the peer's port before the gateway started: the peer's own (the MQTT publisher's), not the driver's. */
    let peerSockets = 0;
    let options: PeerFaultOptions;
    let peerClosed: Promise<void> | undefined;
    const closePeer = () => (peerClosed ??= started.close());
    const client = () => {
      if (!tg) throw new Error('the gateway is not running');
      return tg.gateway.fleet.client(started.machineID);
    };

    beforeAll(async () => {
      timersBefore = handleCount('Timeout');
      started = await row.start();
      peerSockets = started.port === undefined ? 0 : socketsTo(started.port);
      tg = await startTestGateway({ machines: [started.machine] });
      options = {
        machineID: started.machineID, peer: started.peer(tg), requestTimeoutMs: started.requestTimeoutMs,
        attempts: ATTEMPTS, samplingIntervalMs: INTERVAL_MS, boundMs: started.boundMs, downMs: 1_500,
      };
    }, 30_000);
    afterAll(async () => {
      await tg?.stop();
      const peer: StartedPeer | undefined = started;
      if (peer) await closePeer();
    });

    it('connects: the machine goes online with a status sample', async () => {
      await until(`${started.machineID} online`, 20_000, () => freshlyOnline(tg!, started.machineID, 0));
      expect(client().scheme).toBe(row.driver);
    }, 30_000);

    it('reads every family it declares in that family\'s shape, and refuses the others with DRIVER_FAMILY_UNSUPPORTED', async () => {
      const c = client();
      for (const family of READABLE_FAMILIES) {
        if (!c.families.has(family)) {
          expect((await rejection(c.read(family))).errorName, family).toBe('DRIVER_FAMILY_UNSUPPORTED');
          continue;
        }
        const parsed = FAMILY_SHAPES[family].safeParse(await readSoon(c, family));
        expect(parsed.error?.issues, `${row.driver} ${family}`).toBeUndefined();
      }
    }, 30_000);

    it(row.program ? 'lists, reads and writes programs, byte for byte' : 'refuses program transfers with DRIVER_FAMILY_UNSUPPORTED', async () => {
      await expectPrograms(row, client());
    }, 30_000);

    it('GW-20 goes offline with statusStale within its documented bound when the peer dies, with nothing piling up', async () => {
      const report = await killPeer(tg!, options);
      process.stdout.write(`${row.driver}: offline after ${report.offlineAfterMs} ms (bound ${report.boundMs} ms)\n`);
      expectWentDownCleanly(report);
      expect(tg!.gateway.fleet.snapshot(started.machineID).derived).toMatchObject({ state: 'offline', statusStale: true });
    }, 30_000);

    it('GW-20 comes back online with a fresh sample when the peer is back, without a restart', async () => {
      const backAfterMs = await revivePeer(tg!, options);
      process.stdout.write(`${row.driver}: back online after ${backAfterMs} ms\n`);
      expect(freshlyOnline(tg!, started.machineID, Date.now() - backAfterMs)).toBe(true);
      expect(FAMILY_SHAPES.status.safeParse(await client().read('status')).error?.issues).toBeUndefined();
    }, 40_000);

    it('closes cleanly: once the gateway stopped, no socket to the peer is left, and once the peer stopped too, no timer', async () => {
      const stopping = tg!;
      tg = undefined;
      await stopping.stop();
      const port = started.port;
      if (port !== undefined) await until(`no socket of the driver to port ${port}`, 5_000, () => socketsTo(port) <= peerSockets);
      await closePeer();
      await until(`the timers to fall back to ${timersBefore}`, 5_000, () => handleCount('Timeout') <= timersBefore);
    }, 20_000);
  });
}
