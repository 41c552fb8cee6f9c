/**
 * The `opcua` driver: CNC machine tools over OPC UA, mapped from the OPC UA
 * for Machine Tools companion model (OPC 40501). See docs/drivers/opcua.md.
 */
import type { DriverFactory } from '../../core/driver-seam/driver.js';
import { OpcuaClient } from './client.js';
import { opcuaOptionsSchema, type OpcuaOptions } from './options.js';

export { OpcuaClient } from './client.js';
export { opcuaOptionsSchema } from './options.js';
export type { OpcuaOptions, OpcuaOptionsInput } from './options.js';

/** Port of an OPC UA server when the machine config gives none. */
export const OPCUA_DEFAULT_PORT = 4840;

/** `opc.tcp://host:port/path`, with IPv6 hosts in brackets. */
export function endpointUrlOf(ip: string, port: number, path: string): string {
  const host = ip.includes(':') ? `[${ip}]` : ip;
  return `opc.tcp://${host}:${port > 0 ? port : OPCUA_DEFAULT_PORT}${path}`;
}

export const opcuaDriver: DriverFactory<OpcuaOptions> = {
  scheme: 'opcua',
  description: 'OPC UA server of a machine tool, mapped from the OPC UA for Machine Tools model (OPC 40501) or an explicit NodeId map',
  configSchema: opcuaOptionsSchema,
  // The client's certificate and the servers it trusts (connection.ts).
  keeps: { directories: ['opcua/pki'] },
  create(machine, deps) {
    return new OpcuaClient(
      {
        endpointUrl: endpointUrlOf(machine.ip, machine.port, machine.driverOptions.endpointPath),
        options: machine.driverOptions,
        password: machine.password,
        dataDir: deps.dataDir,
        logger: deps.logger,
        peer: { protocol: 'opcua', machineId: machine.machineID, address: machine.ip, port: machine.port },
      },
      deps,
    );
  },
};
