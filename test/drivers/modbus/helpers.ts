/** Shared pieces of the Modbus driver tests. */
import { pino } from 'pino';
import { GatewayError } from '../../../core/interfaces/errors.js';
import { ModbusClient, modbusDriver } from '../../../drivers/modbus/index.js';

/** A Modbus client for `port` on 127.0.0.1 with the given driverOptions (parsed by the driver's schema, as the gateway does). */
export function modbusClient(port: number, options: Record<string, unknown> = {}, now: () => number = Date.now): ModbusClient {
  const driverOptions = modbusDriver.configSchema.parse(options);
  const client = modbusDriver.create({ machineID: 'MB-01', ip: '127.0.0.1', port, driverOptions }, { logger: pino({ level: 'silent' }), dataDir: '/tmp', now });
  if (!(client instanceof ModbusClient)) throw new Error('modbusDriver.create must build a ModbusClient');
  return client;
}

export async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError rejection, got ${String(error)}`);
  return error;
}
