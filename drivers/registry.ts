/** Every driver the gateway ships. Adding a driver is one line here. */
import { registerDriver, type RegisteredDriver } from '../core/driver.js';
import { simulatorDriver } from './simulator/index.js';

export const DRIVERS: readonly RegisteredDriver[] = [registerDriver(simulatorDriver)];
