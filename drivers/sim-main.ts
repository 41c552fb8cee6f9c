/**
 * `npm run sim [-- <scheme> …]`: starts the protocol simulators on their
 * documented local ports (all of them, or those named), prints where they
 * listen, and stops them cleanly on Ctrl-C. Point a gateway at them with
 * `npm start -- --config config/simulators.json`.
 */
import { pino } from 'pino';
import { SIMULATOR_PLANS, startSimulators } from './simulators.js';

const schemes = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const host = process.env.SIM_HOST ?? '127.0.0.1';
const logger = pino({ level: process.env.LOG_LEVEL ?? 'warn' });

let running;
try {
  running = await startSimulators(schemes, { host, logger });
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

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  process.stdout.write(`\n${signal}: stopping simulators\n`);
  const results = await Promise.allSettled(running.map((s) => s.close()));
  const failed = results.filter((r) => r.status === 'rejected');
  for (const f of failed) process.stderr.write(`close failed: ${String((f as PromiseRejectedResult).reason)}\n`);
  process.stdout.write('simulators stopped\n');
  process.exit(failed.length ? 1 : 0);
};
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
