/** Every driver the gateway ships. Adding a driver is one line here. */
import { registerDriver, type RegisteredDriver } from '../core/driver-seam/driver.js';
import { focasDriver } from './focas/index.js';
import { modbusDriver } from './modbus/index.js';
import { mqttDriver } from './mqtt/index.js';
import { mtconnectDriver } from './mtconnect/index.js';
import { opcuaDriver } from './opcua/index.js';
import { simulatorDriver } from './simulator/index.js';

export const DRIVERS: readonly RegisteredDriver[] = [
  registerDriver(simulatorDriver),
  registerDriver(opcuaDriver),
  registerDriver(modbusDriver),
  registerDriver(mqttDriver),
  registerDriver(focasDriver),
  registerDriver(mtconnectDriver),
];
