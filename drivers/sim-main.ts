/**
 * `npm run sim [-- <scheme> …]`: starts the protocol simulators on their
 * documented local ports (all of them, or those named; SIM_<SCHEME>_PORT
 * moves one, 0 lets the OS choose), prints where they listen, and stops them
 * cleanly on Ctrl-C with the same signal rules as `npm start`
 * (core/runtime/process-signals.ts). Point a gateway at them with
 * `npm start -- --config config/simulators.json`.
 */
import { pino } from 'pino';
import { StopOnSignals } from '../core/runtime/process-signals.js';
import type { RunningSimulator } from './protocol-simulator.js';
import { SIMULATOR_PLANS, simulatorPortsFromEnv, startSimulators } from './simulators.js';

/** Closing a simulator drops its clients and its listener; past this it exits 1 naming the ones left. */
const SIMULATOR_STOP_DEADLINE_MS = 10_000;

const schemes = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const host = process.env.SIM_HOST ?? '127.0.0.1';
const logger = pino({ level: process.env.LOG_LEVEL ?? 'warn' });

let running: RunningSimulator[];
try {
  running = await startSimulators(schemes, { host, logger, portFor: simulatorPortsFromEnv(process.env) });
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.stderr.write(`usage: npm run sim [-- ${SIMULATOR_PLANS.map((p) => p.scheme).join('|')} …]\n`);
  process.exit(2);
}

for (const sim of running) {
  process.stdout.write(`${sim.scheme} simulator on ${sim.host}:${sim.port}\n`);
  for (const line of sim.describe()) process.stdout.write(`  ${line}\n`);
}
process.stdout.write('\nWatch them through a gateway: npm start -- --config config/simulators.json\nCtrl-C stops the simulators.\n');

new StopOnSignals({
  parts: running.map((sim) => ({
    name: `${sim.scheme} simulator on port ${sim.port}`,
    stop: async () => {
      await sim.close();
    },
  })),
  onStopped: () => void process.stdout.write('simulators stopped cleanly\n'),
  deadlineMs: SIMULATOR_STOP_DEADLINE_MS,
}).install();
