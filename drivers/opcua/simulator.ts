/**
 * An OPC UA server of simulated machine tools (OPC 40501 layout), driven by
 * the shared machine model and refreshed every 250 ms. It is what `npm run sim`
 * serves on port 4840 and what the driver's tests connect to.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OPCUAServer } from 'node-opcua';
import type { ProtocolSimulatorOptions, RunningSimulator, SimulatedMachineSpec, StartSimulator } from '../protocol-simulator.js';
import { simulatorOptionsSchema } from '../simulator/options.js';
import { vendorFor } from '../simulator/catalog-vendors.js';
import { SimulatedMachine } from '../simulator/model.js';
import { loadOpcua, type OpcuaModule } from './connection.js';
import { CHANNEL_MODES, CHANNEL_STATES, DI_NS, MACHINERY_NS, MACHINE_TOOL_NS } from './mapping.js';
import { SECURITY_MODES, type SecurityModeName } from './options.js';
import { addProgramDirectory, type ServedDirectory, type TransferStats } from './simulator-files.js';
import { SIMULATOR_NS, VENDOR_NODES, buildMachineSpace, type Pinnable } from './simulator-space.js';

/** Port `npm run sim` uses for the OPC UA simulator (the IANA port of OPC UA). */
export const OPCUA_SIMULATOR_PORT = 4840;
const UPDATE_INTERVAL_MS = 250;

export interface OpcuaSimulatorOptions extends ProtocolSimulatorOptions {
  /** Security modes offered; all three by default. Sign and SignAndEncrypt come with Basic256Sha256, Aes128_Sha256_RsaOaep and Aes256_Sha256_RsaPss. */
  securityModes?: readonly SecurityModeName[];
  /** Accepted user names and passwords. */
  users?: ReadonlyArray<{ userName: string; password: string }>;
  /** Whether anonymous logins are accepted; true by default. */
  allowAnonymous?: boolean;
  /** Where the server keeps its certificate; reused across starts. */
  pkiDir?: string;
  /** Whether each machine has its program directory (FileDirectoryType `Programs`); true by default. */
  programDirectory?: boolean;
  /** Whether a machine runs the program last written to it (the model's `runsLastProgram`); false by default. */
  runsLastProgram?: boolean;
  /** The server's MaxByteStringLength (ServerCapabilities), bounding one Read or Write of a file; node-opcua's default when not given. */
  maxByteStringLength?: number;
}

/** A running OPC UA simulator, with test hooks. */
export interface RunningOpcuaSimulator extends RunningSimulator {
  /** Holds an item at `value`, or makes it Bad; `undefined` hands it back to the model. */
  pin(machineID: string, item: Pinnable, value: number | 'bad' | undefined): void;
  /** The model behind a served machine. */
  machine(machineID: string): SimulatedMachine;
  /** Sessions created since start, and those open now. */
  sessions(): { created: number; open: number };
  /** File transfer counters of a machine's program directory; undefined without one. */
  transfers(machineID: string): TransferStats | undefined;
}

export const startOpcuaSimulator: StartSimulator = (options) => startOpcuaServer(options);

/** The server, with the security modes, policies and logins the options ask for. */
function createServer(opcua: OpcuaModule, options: OpcuaSimulatorOptions, host: string, modes: readonly SecurityModeName[]): OPCUAServer {
  const pkiDir = options.pkiDir ?? join(tmpdir(), 'cnc-gateway-opcua-simulator-pki');
  const secure = modes.some((m) => m !== 'None');
  const users = options.users ?? [];
  return new opcua.OPCUAServer({
    port: options.port ?? 0,
    host,
    hostname: host,
    securityModes: modes.map((m) => opcua.MessageSecurityMode[m]),
    securityPolicies: [
      ...(modes.includes('None') ? [opcua.SecurityPolicy.None] : []),
      ...(secure ? [opcua.SecurityPolicy.Basic256Sha256, opcua.SecurityPolicy.Aes128_Sha256_RsaOaep, opcua.SecurityPolicy.Aes256_Sha256_RsaPss] : []),
    ],
    allowAnonymous: options.allowAnonymous ?? true,
    userManager: { isValidUser: (userName: string, password: string) => users.some((u) => u.userName === userName && u.password === password) },
    serverCertificateManager: new opcua.OPCUACertificateManager({ rootFolder: join(pkiDir, 'server'), automaticallyAcceptUnknownCertificate: true }),
    userCertificateManager: new opcua.OPCUACertificateManager({ rootFolder: join(pkiDir, 'user'), automaticallyAcceptUnknownCertificate: true }),
    // A shop floor's worth of gateways and tools may look at one simulator at once.
    maxConnectionsPerEndpoint: 100,
    serverCapabilities: { maxSessions: 100, ...(options.maxByteStringLength !== undefined ? { maxByteStringLength: options.maxByteStringLength } : {}) },
    buildInfo: { productName: 'CNC gateway OPC UA simulator', manufacturerName: 'cnc-machine-gateway' },
  });
}

interface ServedMachine {
  spec: SimulatedMachineSpec;
  model: SimulatedMachine;
  space: ReturnType<typeof buildMachineSpace>;
  programs: ServedDirectory | undefined;
  pins: Map<Pinnable, number | 'bad'>;
}

/** Registers the namespaces and adds every machine under Objects/Machines. */
function addMachines(opcua: OpcuaModule, server: OPCUAServer, options: OpcuaSimulatorOptions): ServedMachine[] {
  const now = options.now ?? Date.now;
  const addressSpace = server.engine.addressSpace;
  if (!addressSpace) throw new Error('OPC UA simulator: no address space after initialize');
  const di = addressSpace.registerNamespace(DI_NS);
  const machinery = addressSpace.registerNamespace(MACHINERY_NS);
  const mt = addressSpace.registerNamespace(MACHINE_TOOL_NS);
  const sim = addressSpace.registerNamespace(SIMULATOR_NS);
  const channelStateType = mt.addEnumerationType({ browseName: 'ChannelState', enumeration: [...CHANNEL_STATES] }).nodeId.toString();
  const channelModeType = mt.addEnumerationType({ browseName: 'ChannelMode', enumeration: [...CHANNEL_MODES] }).nodeId.toString();
  const machinesFolder = sim.addObject({
    nodeId: `ns=${sim.index};s=Machines`,
    browseName: { name: 'Machines', namespaceIndex: machinery.index },
    organizedBy: addressSpace.rootFolder.objects,
    typeDefinition: 'FolderType',
  });
  return options.machines.map((spec) => {
    const parsed = simulatorOptionsSchema.parse({ seed: spec.seed, machineType: spec.machineType, system: spec.system, timeScale: spec.timeScale ?? 1 });
    const model = new SimulatedMachine({ ...parsed, seed: spec.seed, runsLastProgram: options.runsLastProgram ?? false }, now);
    const ns = { sim, mt, machinery, di, channelStateType, channelModeType };
    const space = buildMachineSpace(opcua, ns, machinesFolder, spec.machineID, model);
    const programs = options.programDirectory === false ? undefined : addProgramDirectory(opcua, ns, space.root, spec.machineID, model);
    return { spec, model, space, programs, pins: new Map<Pinnable, number | 'bad'>() };
  });
}

/** Starts the server; resolves once it listens. */
export async function startOpcuaServer(options: OpcuaSimulatorOptions): Promise<RunningOpcuaSimulator> {
  const opcua = await loadOpcua();
  const host = options.host ?? '127.0.0.1';
  const modes = options.securityModes ?? SECURITY_MODES;
  const users = options.users ?? [];
  const server = createServer(opcua, options, host, modes);
  await server.initialize();
  const machines = addMachines(opcua, server, options);
  const served = (machineID: string) => {
    const m = machines.find((x) => x.spec.machineID === machineID);
    if (!m) throw new Error(`OPC UA simulator: no machine '${machineID}'`);
    return m;
  };
  const refresh = () => {
    for (const m of machines) m.space.update(m.pins);
  };
  refresh();
  await server.start();
  const timer = setInterval(refresh, UPDATE_INTERVAL_MS);
  const port = server.endpoints[0]?.port ?? options.port ?? 0;
  const endpointUrl = `opc.tcp://${host}:${port}`;
  let closing: Promise<void> | undefined;

  return {
    scheme: 'opcua',
    host,
    port,
    describe: () => [
      `OPC UA ${endpointUrl} (security ${modes.join(', ')}; ${[...(options.allowAnonymous ?? true ? ['anonymous'] : []), ...(users.length ? ['user name and password'] : [])].join(' or ')} login)`,
      ...machines.map((m) => `  Objects/Machines/${m.spec.machineID}: ${m.spec.system} ${m.spec.machineType} (OPC 40501 Monitoring, Production, Notification, Equipment)`),
    ],
    machineConfig: (machine: SimulatedMachineSpec) =>
      machineConfigFor(machine, host, port, options.programDirectory === false ? undefined : vendorFor(machine.system).programDir),
    machine: (machineID) => served(machineID).model,
    pin(machineID, item, value) {
      const m = served(machineID);
      if (value === undefined) m.pins.delete(item);
      else m.pins.set(item, value);
      refresh();
    },
    sessions: () => ({ created: server.engine.cumulatedSessionCount, open: server.engine.currentSessionCount }),
    transfers: (machineID) => {
      const stats = served(machineID).programs?.stats;
      return stats ? { ...stats } : undefined;
    },
    close() {
      closing ??= (async () => {
        clearInterval(timer);
        await server.shutdown(0);
        await server.dispose();
      })();
      return closing;
    },
  };
}

/** The gateway machine entry for `machine`: the model for the standard items, the simulator's own nodes for the rest. */
function machineConfigFor(machine: SimulatedMachineSpec, host: string, port: number, programDir: string | undefined): Record<string, unknown> {
  const nodes = Object.fromEntries(Object.entries(VENDOR_NODES).map(([item, path]) => [item, `nsu=${SIMULATOR_NS};s=${machine.machineID}.${path}`]));
  return {
    machineID: machine.machineID,
    name: `${machine.system} ${machine.machineType} (OPC UA)`,
    system: machine.system,
    machineType: machine.machineType,
    driver: 'opcua',
    ip: host,
    port,
    // The directory keeps the name the controller's other interfaces give it, so an assignment names it alike.
    driverOptions: { machine: machine.machineID, nodes, ...(programDir !== undefined ? { programDir } : {}) },
  };
}
