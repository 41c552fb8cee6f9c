/** The simulated fleet the benchmarks run: mixed machine types and vendors, 1 s status sampling. */
const MACHINE_TYPES = ['lathe', 'mill', 'machiningCenter', 'turnMill', 'grinder'] as const;
const SYSTEMS = ['FANUC', 'SIEMENS', 'HEIDENHAIN', 'MAZAK', 'OKUMA'] as const;

/** Machine configs B0000…, each with its own seed; `timeScale` speeds the simulated shop floor up. */
export function benchMachines(count: number, timeScale = 10): Record<string, unknown>[] {
  return Array.from({ length: count }, (_, i) => {
    const machineType = MACHINE_TYPES[i % MACHINE_TYPES.length];
    const system = SYSTEMS[i % SYSTEMS.length];
    return {
      machineID: `B${String(i).padStart(4, '0')}`,
      name: `Bench ${i}`,
      machineType,
      system,
      driver: 'simulator',
      driverOptions: { seed: i, machineType, system, timeScale },
      tasks: { CNCStatus: { enabled: true, intervalMs: 1000 } },
    };
  });
}
