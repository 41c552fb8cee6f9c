/**
 * Runs the FOCAS bridge simulator on its own: `npx tsx drivers/focas/sim-main.ts [port]`.
 * Port 8193 (the FOCAS Ethernet port) unless given; two CNCs, a machining
 * centre and a lathe. Stops cleanly on SIGINT/SIGTERM.
 */
import { startFocasSimulator } from './simulator.js';

const DEFAULT_PORT = 8193;

async function main(): Promise<void> {
  const port = process.argv[2] === undefined ? DEFAULT_PORT : Number(process.argv[2]);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`port must be 0–65535, got '${process.argv[2] ?? ''}'`);
  const sim = await startFocasSimulator({
    host: process.env.FOCAS_SIM_HOST ?? '127.0.0.1',
    port,
    machines: [
      { machineID: 'FANUC-MC-01', seed: 101, machineType: 'machiningCenter', system: 'FANUC 31i-B' },
      { machineID: 'FANUC-LATHE-02', seed: 202, machineType: 'lathe', system: 'FANUC 0i-TF' },
    ],
  });
  process.stdout.write(`${sim.describe().join('\n')}\n`);
  process.stdout.write(`machine config for the gateway: ${JSON.stringify(sim.machineConfig({ machineID: 'FANUC-MC-01', seed: 101, machineType: 'machiningCenter', system: 'FANUC 31i-B' }))}\n`);
  const stop = (signal: string) => {
    process.stdout.write(`${signal}: stopping the FOCAS bridge simulator\n`);
    void sim.close().then(() => process.exit(0));
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
