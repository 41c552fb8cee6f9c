/** Shared set-up of the OPC UA driver tests: a simulator spec and a client factory. */
import { pino } from 'pino';
import { GatewayError } from '../../../core/interfaces/errors.js';
import { OpcuaClient, opcuaDriver, type OpcuaOptionsInput } from '../../../drivers/opcua/index.js';
import type { SimulatedMachineSpec } from '../../../drivers/protocol-simulator.js';

export const MILL: SimulatedMachineSpec = { machineID: 'MC-1', seed: 7, machineType: 'machiningCenter', system: 'FANUC' };
export const LATHE: SimulatedMachineSpec = { machineID: 'LATHE-2', seed: 11, machineType: 'lathe', system: 'SIEMENS' };

/** A client of the `opcua` driver for `port`, with options parsed by the driver's own schema. */
export function opcuaClient(port: number, dataDir: string, options: OpcuaOptionsInput = {}, password?: string): OpcuaClient {
  const driverOptions = opcuaDriver.configSchema.parse(options);
  const client = opcuaDriver.create(
    { machineID: 'MC-1', ip: '127.0.0.1', port, driverOptions, ...(password !== undefined ? { password } : {}) },
    { logger: pino({ level: 'silent' }), dataDir, now: Date.now },
  );
  if (!(client instanceof OpcuaClient)) throw new Error('opcuaDriver.create must build an OpcuaClient');
  return client;
}

export async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError rejection, got ${String(error)}`);
  return error;
}
