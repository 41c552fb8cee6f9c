/** Every driver the gateway ships. Adding a driver is one line here. */
import type { DriverFactory } from '../core/driver.js';
import { simulatorDriver } from './simulator/index.js';

export const DRIVERS: readonly DriverFactory<never>[] = [simulatorDriver as DriverFactory<never>];
