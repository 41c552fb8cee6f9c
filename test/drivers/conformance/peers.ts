/**
 * One row per driver for the conformance suite (test/drivers/conformance.test.ts):
 * how to start the driver's peer, the gateway machine that reads it, how to
 * kill the peer and bring it back on the same port, the program the row
 * writes when the driver carries programs, and the bound on going offline
 * that the driver's docs page gives. A new driver adds one row here, or one
 * per kind of peer it reads (MTConnect: an adapter and an agent).
 */
import { connectAsync } from 'mqtt';
import type { DriverClient } from '../../../core/driver-seam/driver.js';
import type { RunningSimulator, SimulatedMachineSpec } from '../../../drivers/protocol-simulator.js';
import { startFocasSimulator } from '../../../drivers/focas/simulator.js';
import { startModbusSimulator } from '../../../drivers/modbus/simulator.js';
import { startMtconnectAgentSimulator } from '../../../drivers/mtconnect/agent-simulator.js';
import { startMtconnectAdapterSimulator } from '../../../drivers/mtconnect/simulator.js';
import { SIMULATOR_TOPICS } from '../../../drivers/mqtt/default-mapping.js';
import { startMqttPublisher } from '../../../drivers/mqtt/publisher.js';
import { startOpcuaServer } from '../../../drivers/opcua/simulator.js';
import { SimulatorClient } from '../../../drivers/simulator/client.js';
import type { TestGateway } from '../../fixtures/gateway.js';
import type { Peer } from '../../fixtures/peer-faults.js';
import { MC } from '../focas/bridge-fixtures.js';
import { aedesBrokers, type BrokerKind } from '../mqtt/broker-controller.js';
import { MILL } from '../opcua/helpers.js';

/** The machine's CNCStatus sampling interval in every row, ms. */
export const INTERVAL_MS = 200;
/** Failed requests before the link counts as lost, in every row. */
export const ATTEMPTS = 3;
const BACKOFF_MAX_MS = 1_000;

/** A row's peer, started. */
export interface StartedPeer {
  /** The gateway machine config entry that reads the peer. */
  machine: Record<string, unknown>;
  machineID: string;
  /** The peer's TCP port; the client must hold no socket to it after the gateway stopped. Undefined for an in-process peer. */
  port: number | undefined;
  /** Kills the peer and brings it back on the same port (the simulator: drops and restores its link). */
  peer(tg: TestGateway): Peer;
  /** The driver's own request timeout, ms. */
  requestTimeoutMs: number;
  /** The bound on going offline once the peer died, ms, as the driver's docs page gives it. */
  boundMs: number;
  /** Stops the peer for good. */
  close(): Promise<void>;
}

/** A program to write and read back, for a driver that carries programs (family `programFiles`). */
export interface ProgramSample {
  name: string;
  content: Buffer;
}

export interface PeerRow {
  driver: string;
  /** Which kind of peer, for a driver with a row per kind. */
  label?: string;
  /** The program the row writes; undefined for a driver without `programFiles`. */
  program?: ProgramSample;
  start(): Promise<StartedPeer>;
}

/** The machine's connection settings in every row: short backoff, so a revived peer is found quickly. */
function connection(connectTimeoutMs: number): Record<string, number> {
  return { backoffBaseMs: 100, backoffMaxMs: BACKOFF_MAX_MS, failuresBeforeLost: ATTEMPTS, requestTimeoutMs: 2_000, connectTimeoutMs };
}

/** Only CNCStatus is sampled: the suite reads the other families itself. */
const TASKS = {
  CNCStatus: { enabled: true, intervalMs: INTERVAL_MS },
  Count: { enabled: false }, Cycle: { enabled: false }, TimeData: { enabled: false }, ToolLife: { enabled: false }, OEE: { enabled: false },
};

/** The bound most drivers document: request timeout × failuresBeforeLost + one sampling interval. */
const requestBound = (requestTimeoutMs: number) => requestTimeoutMs * ATTEMPTS + INTERVAL_MS;

/** A protocol simulator as a peer that dies with `close()` and comes back by starting again on its first port. */
async function restartable(
  spec: SimulatedMachineSpec,
  start: (port: number) => Promise<RunningSimulator>,
  machine: (sim: RunningSimulator) => Record<string, unknown>,
  timeouts: { requestTimeoutMs: number; connectTimeoutMs: number; boundMs?: number },
): Promise<StartedPeer> {
  let sim = await start(0);
  const port = sim.port;
  const config = sim.machineConfig(spec);
  return {
    machine: { ...config, ...machine(sim), tasks: TASKS, connection: connection(timeouts.connectTimeoutMs + 2_000) },
    machineID: spec.machineID,
    port,
    peer: () => ({
      stop: () => sim.close(),
      start: async () => {
        sim = await start(port);
      },
    }),
    requestTimeoutMs: timeouts.requestTimeoutMs,
    boundMs: timeouts.boundMs ?? requestBound(timeouts.requestTimeoutMs),
    close: () => sim.close(),
  };
}

const MODBUS_SPEC: SimulatedMachineSpec = { machineID: 'MB-CONF', seed: 21, machineType: 'lathe', system: 'FANUC 0i-TF' };
const MQTT_SPEC: SimulatedMachineSpec = { machineID: 'MQ-CONF', seed: 11, machineType: 'machiningCenter', system: 'FANUC' };
const MTC_ADAPTER_SPEC: SimulatedMachineSpec = { machineID: 'MTC-CONF-A', seed: 31, machineType: 'lathe', system: 'OKUMA', timeScale: 5 };
const MTC_AGENT_SPEC: SimulatedMachineSpec = { machineID: 'MTC-CONF-B', seed: 32, machineType: 'lathe', system: 'MAZAK', timeScale: 5 };

/** A FANUC-style program: the O-number in the text must match the name (docs/drivers/focas.md). */
const program = (name: string): ProgramSample => ({
  name,
  content: Buffer.from(`%\n${name} (CONFORMANCE)\nG90 G54 G00 X0. Y0.\nG01 X10. F200\nM30\n%\n`, 'latin1'),
});

/** The options part of a simulator's machine config, with the row's timeouts merged in. */
const optionsOf = (sim: RunningSimulator, spec: SimulatedMachineSpec, extra: Record<string, unknown>) =>
  ({ driverOptions: { ...(sim.machineConfig(spec).driverOptions as object), ...extra } });

/** Resolves once the publisher has said `online` for the machine on its availability topic. */
async function publisherOnline(url: string, machineID: string): Promise<void> {
  const probe = await connectAsync(url, { reconnectPeriod: 0 });
  try {
    const online = new Promise<void>((resolve) => {
      probe.on('message', (_topic, payload) => {
        if (payload.toString() === 'online') resolve();
      });
    });
    await probe.subscribeAsync(SIMULATOR_TOPICS.availability.replace('{machineID}', machineID));
    await online;
  } finally {
    await probe.endAsync(true);
  }
}

/**
 * The MQTT row for one broker kind: the broker is the peer that dies and comes back, and a
 * publisher beside it, reconnecting by itself, publishes the machine on the default mapping.
 * Run with aedes here and with Mosquitto in test/peers/mqtt-mosquitto.test.ts.
 */
export function mqttRow(kind: BrokerKind): PeerRow {
  return {
    driver: 'mqtt',
    async start() {
      const broker = await kind.start();
      const publisher = await startMqttPublisher({ url: broker.url, machines: [MQTT_SPEC], intervalMs: 100 });
      // The publisher connects in the background; wait for it, so its socket counts as the peer's, not the driver's.
      await publisherOnline(broker.url, MQTT_SPEC.machineID);
      return {
        machine: {
          machineID: MQTT_SPEC.machineID, name: `MQTT ${MQTT_SPEC.machineID}`, driver: 'mqtt', ip: broker.host, port: broker.port,
          driverOptions: { requestTimeoutMs: 1_000, connectTimeoutMs: 2_000 }, tasks: TASKS, connection: connection(3_000),
        },
        machineID: MQTT_SPEC.machineID,
        port: broker.port,
        peer: () => broker,
        requestTimeoutMs: 1_000,
        // A dying broker closes its connections, so the link is lost at once (docs/drivers/mqtt.md).
        boundMs: requestBound(1_000),
        close: async () => {
          await publisher.close();
          await broker.stop();
        },
      };
    },
  };
}

export const PEERS: readonly PeerRow[] = [
  {
    driver: 'opcua',
    program: program('O7303'),
    start: () => restartable(
      MILL,
      (port) => startOpcuaServer({ machines: [MILL], port }),
      // The first connect may create the client certificate, which takes a few seconds on a busy host.
      (sim) => optionsOf(sim, MILL, { requestTimeoutMs: 1_000, connectTimeoutMs: 10_000 }),
      { requestTimeoutMs: 1_000, connectTimeoutMs: 10_000 },
    ),
  },
  {
    driver: 'modbus',
    start: () => restartable(
      MODBUS_SPEC,
      (port) => startModbusSimulator({ port, machines: [MODBUS_SPEC] }),
      (sim) => optionsOf(sim, MODBUS_SPEC, { requestTimeoutMs: 500, connectTimeoutMs: 1_000 }),
      { requestTimeoutMs: 500, connectTimeoutMs: 1_000 },
    ),
  },
  mqttRow(aedesBrokers),
  {
    driver: 'focas',
    program: program('O7301'),
    start: () => restartable(
      MC,
      (port) => startFocasSimulator({ machines: [MC], port }),
      () => ({ driverOptions: { cnc: MC.machineID, requestTimeoutMs: 500, connectTimeoutMs: 1_000 } }),
      { requestTimeoutMs: 500, connectTimeoutMs: 1_000 },
    ),
  },
  {
    // MTConnect from an SHDR adapter: a dead adapter closes its connection, so the link is lost at once (docs/drivers/mtconnect.md).
    driver: 'mtconnect',
    label: 'SHDR adapter',
    start: () => restartable(
      MTC_ADAPTER_SPEC,
      (port) => startMtconnectAdapterSimulator({ port, machines: [MTC_ADAPTER_SPEC] }),
      (sim) => optionsOf(sim, MTC_ADAPTER_SPEC, { requestTimeoutMs: 1_000, connectTimeoutMs: 1_000 }),
      { requestTimeoutMs: 1_000, connectTimeoutMs: 1_000 },
    ),
  },
  {
    // MTConnect from an agent: the stream's socket closes with the agent; its restart is a new instanceId, read from /probe again.
    driver: 'mtconnect',
    label: 'agent',
    start: () => restartable(
      MTC_AGENT_SPEC,
      (port) => startMtconnectAgentSimulator({ port, machines: [MTC_AGENT_SPEC] }),
      (sim) => optionsOf(sim, MTC_AGENT_SPEC, { requestTimeoutMs: 1_000 }),
      { requestTimeoutMs: 1_000, connectTimeoutMs: 1_000 },
    ),
  },
  {
    driver: 'simulator',
    program: program('O7302'),
    async start() {
      const machineID = 'SIM-CONF';
      const client = (tg: TestGateway): SimulatorClient => {
        const c: DriverClient = tg.gateway.fleet.client(machineID);
        if (!(c instanceof SimulatorClient)) throw new Error('the machine must be read by the simulator driver');
        return c;
      };
      return {
        machine: {
          machineID, name: 'Simulator conformance', system: 'FANUC', machineType: 'mill', driver: 'simulator',
          driverOptions: { seed: 7, machineType: 'mill', system: 'FANUC' }, tasks: TASKS, connection: connection(3_000),
        },
        machineID,
        port: undefined,
        peer: (tg) => ({
          stop: async () => client(tg).loseConnection(),
          start: async () => client(tg).restoreConnection(),
        }),
        requestTimeoutMs: 0,
        // A dropped link fails the next request at once; the machine is offline once its status is
        // three intervals old, which the actor checks at each reconnect attempt (docs/drivers/simulator.md).
        boundMs: 3 * INTERVAL_MS + BACKOFF_MAX_MS,
        close: async () => undefined,
      };
    },
  },
];
