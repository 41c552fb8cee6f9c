/**
 * The contract every protocol simulator follows, so `npm run sim` can start
 * them all and tests can start any one of them on an OS-chosen port. Each
 * simulator serves machines driven by the simulator's machine model
 * (`drivers/simulator/model.ts`), so protocol values move like a real shop's.
 */
import type { Logger } from 'pino';
import type { MachineType } from './simulator/catalog.js';

/** One simulated machine behind a protocol simulator. */
export interface SimulatedMachineSpec {
  machineID: string;
  seed: number;
  machineType: MachineType;
  /** Controller vendor, e.g. FANUC, SIEMENS (see drivers/simulator/catalog.ts). */
  system: string;
  /** Simulated seconds per real second; 1 unless a test needs the shop to move faster. */
  timeScale?: number;
}

export interface ProtocolSimulatorOptions {
  /** Interface to listen on; 127.0.0.1 unless told otherwise. */
  host?: string;
  /** Port to listen on; 0 lets the OS choose. */
  port?: number;
  machines: readonly SimulatedMachineSpec[];
  logger?: Logger;
  /** Clock of the machine model, unix ms; tests may substitute one. */
  now?: () => number;
}

/** A running protocol simulator. */
export interface RunningSimulator {
  scheme: string;
  host: string;
  /** The port actually listened on. */
  port: number;
  /** Lines for a person: where to connect and what is served. */
  describe(): string[];
  /** The gateway machine config entry that reads `machine` through this simulator. */
  machineConfig(machine: SimulatedMachineSpec): Record<string, unknown>;
  /** Stops listening and releases every socket and timer. Safe to call twice. */
  close(): Promise<void>;
}

export type StartSimulator = (options: ProtocolSimulatorOptions) => Promise<RunningSimulator>;
