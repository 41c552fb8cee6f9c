/**
 * The protocol simulators together: which machines each serves and on which
 * documented local port. `npm run sim` starts them (drivers/sim-main.ts);
 * `config/simulators.json` points a gateway at them; a test checks that the
 * two agree.
 */
import type { Logger } from 'pino';
import type { RunningSimulator, SimulatedMachineSpec, StartSimulator } from './protocol-simulator.js';

export interface SimulatorPlan {
  scheme: string;
  /** The documented local port (docs/drivers/<scheme>.md). */
  port: number;
  machines: readonly SimulatedMachineSpec[];
  /** Loads the simulator only when it is started: node-opcua alone takes over a second to import. */
  load(): Promise<StartSimulator>;
}

export const SIMULATOR_PLANS: readonly SimulatorPlan[] = [
  {
    scheme: 'opcua',
    port: 4840,
    machines: [
      { machineID: 'OPC-M01', seed: 4101, machineType: 'machiningCenter', system: 'SIEMENS' },
      { machineID: 'OPC-L01', seed: 4102, machineType: 'lathe', system: 'HEIDENHAIN' },
    ],
    load: async () => (await import('./opcua/simulator.js')).startOpcuaSimulator,
  },
  {
    scheme: 'modbus',
    port: 5020,
    machines: [
      { machineID: 'MB-M01', seed: 5101, machineType: 'mill', system: 'FANUC' },
      { machineID: 'MB-G01', seed: 5102, machineType: 'grinder', system: 'SIEMENS' },
    ],
    load: async () => (await import('./modbus/simulator.js')).startModbusSimulator,
  },
  {
    scheme: 'mqtt',
    port: 1883,
    machines: [
      { machineID: 'MQ-T01', seed: 6101, machineType: 'turnMill', system: 'OKUMA' },
      { machineID: 'MQ-M01', seed: 6102, machineType: 'mill', system: 'MAZAK' },
    ],
    load: async () => (await import('./mqtt/simulator.js')).startMqttSimulator,
  },
  {
    scheme: 'focas',
    port: 8193,
    machines: [
      { machineID: 'FC-L01', seed: 7101, machineType: 'lathe', system: 'FANUC' },
      { machineID: 'FC-M01', seed: 7102, machineType: 'machiningCenter', system: 'FANUC' },
    ],
    load: async () => (await import('./focas/simulator.js')).startFocasSimulator,
  },
  {
    // An SHDR adapter serves one device: one machine.
    scheme: 'mtconnect',
    port: 7878,
    machines: [{ machineID: 'MT-L01', seed: 8101, machineType: 'lathe', system: 'OKUMA' }],
    load: async () => (await import('./mtconnect/simulator.js')).startMtconnectAdapterSimulator,
  },
  {
    // Beside a gateway that serves MTConnect itself on 5000, the stand-in takes the next port.
    scheme: 'mtconnect-agent',
    port: 5001,
    machines: [
      { machineID: 'MT-L02', seed: 8102, machineType: 'lathe', system: 'MAZAK' },
      { machineID: 'MT-L03', seed: 8103, machineType: 'lathe', system: 'DMG MORI' },
    ],
    load: async () => (await import('./mtconnect/agent-simulator.js')).startMtconnectAgentSimulator,
  },
];

/** Starts the simulators of `schemes` (all when empty), each on `portFor(plan)`; stops those started if one fails. */
export async function startSimulators(
  schemes: readonly string[],
  options: { host?: string; portFor?: (plan: SimulatorPlan) => number; logger?: Logger } = {},
): Promise<RunningSimulator[]> {
  const known = SIMULATOR_PLANS.map((p) => p.scheme);
  const unknown = schemes.filter((s) => !known.includes(s));
  if (unknown.length) throw new Error(`unknown simulator ${unknown.map((s) => `'${s}'`).join(', ')}; accepted: ${known.join(', ')}`);
  const plans = schemes.length ? SIMULATOR_PLANS.filter((p) => schemes.includes(p.scheme)) : SIMULATOR_PLANS;
  const running: RunningSimulator[] = [];
  try {
    for (const plan of plans) {
      const start = await plan.load();
      running.push(
        await start({
          host: options.host ?? '127.0.0.1',
          port: options.portFor ? options.portFor(plan) : plan.port,
          machines: plan.machines,
          ...(options.logger ? { logger: options.logger } : {}),
        }),
      );
    }
  } catch (err) {
    await Promise.allSettled(running.map((s) => s.close()));
    throw err;
  }
  return running;
}

/** The environment variable that moves a simulator off its documented port, e.g. SIM_MODBUS_PORT, SIM_MTCONNECT_AGENT_PORT. */
export function simulatorPortVariable(scheme: string): string {
  return `SIM_${scheme.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_PORT`;
}

/**
 * The port of each simulator: its documented one, or SIM_<SCHEME>_PORT from
 * `env` (0 lets the OS choose). Throws naming the variable and the accepted values.
 */
export function simulatorPortsFromEnv(env: NodeJS.ProcessEnv): (plan: SimulatorPlan) => number {
  const ports = new Map<string, number>();
  for (const plan of SIMULATOR_PLANS) {
    const name = simulatorPortVariable(plan.scheme);
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    const n = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || n > 65535) throw new Error(`${name}: found "${raw}"; expected an integer 0-65535 (0 lets the OS choose)`);
    ports.set(plan.scheme, n);
  }
  return (plan) => ports.get(plan.scheme) ?? plan.port;
}
