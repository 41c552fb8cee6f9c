/** Shared pieces of the MTConnect driver tests. */
import { pino, type Logger } from 'pino';
import { expect } from 'vitest';
import { GatewayError } from '../../../core/interfaces/errors.js';
import { MtconnectClient, mtconnectDriver } from '../../../drivers/mtconnect/index.js';
import type { SimulatedMachineSpec } from '../../../drivers/protocol-simulator.js';

/** The recorded lathe as a simulated machine: ten times faster than recorded, so a test sees it move. */
export const LATHE: SimulatedMachineSpec = { machineID: 'MT-L01', seed: 0, machineType: 'lathe', system: 'MTConnect', timeScale: 10 };

/** An MTConnect client on 127.0.0.1:`port` with the given driverOptions (parsed by the driver's schema, as the gateway does). */
export function mtconnectClient(port: number, options: Record<string, unknown> = {}, extra: { logger?: Logger; now?: () => number; machineID?: string } = {}): MtconnectClient {
  const driverOptions = mtconnectDriver.configSchema.parse(options);
  const client = mtconnectDriver.create(
    { machineID: extra.machineID ?? LATHE.machineID, ip: '127.0.0.1', port, driverOptions },
    { logger: extra.logger ?? pino({ level: 'silent' }), dataDir: '/tmp', now: extra.now ?? Date.now },
  );
  if (!(client instanceof MtconnectClient)) throw new Error('mtconnectDriver.create must build an MtconnectClient');
  return client;
}

export async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError rejection, got ${String(error)}`);
  return error;
}

/** The lathe at the start of its recording, one recorded second per second: the first change is 4 s away. */
export const START: SimulatedMachineSpec = { ...LATHE, seed: 0, timeScale: 1 };

/** The recorded lathe's state at the start of the recording (recordings/lathe.shdr, its first entries). */
export const AT_START = {
  status: { cncStatus: 'READY', adjustedStatus: 'RESET', alarmStatus: false, alarmLevel: 'none', mode: 'MANUAL', programStatus: 'stopped', emergency: false, program: 'O1001' },
  count: { partCount: 120, partsRequired: 200, partsTotal: 120, program: 'O1001' },
  toolNumber: { toolNumber: 1 },
  feedAndSpindle: { feedRate: 0, feedOverride: 100, spindleSpeed: 0, spindleOverride: 100, rapidOverride: 100 },
  timeData: { powerOnTime: 36000, operatingTime: 21000, cuttingTime: 15400, cycleTime: 0 },
  alarm: [],
  load: [{ name: 'X', loadPercent: 0 }, { name: 'Z', loadPercent: 0 }, { name: 'S', loadPercent: 0 }],
  toolLife: [
    { toolNum: 1, groupNum: 1, offsetNum: 0, used: 42, limit: 240, unit: 'minutes', remainingPercent: 82.5 },
    { toolNum: 2, groupNum: 1, offsetNum: 0, used: 12.5, limit: 120, unit: 'minutes', remainingPercent: 89.6 },
    { toolNum: 3, groupNum: 2, offsetNum: 0, used: 80, limit: 90, unit: 'minutes', remainingPercent: 11.1 },
  ],
} as const;

/** Reads every family of AT_START and checks it. */
export async function expectAtStart(client: MtconnectClient): Promise<void> {
  for (const family of Object.keys(AT_START) as Array<keyof typeof AT_START>) {
    const value = await client.read(family);
    if (family === 'status') expect(value).toMatchObject(AT_START.status);
    else expect(value, family).toEqual(AT_START[family]);
  }
}
