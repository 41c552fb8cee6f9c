/**
 * The MQTT protocol simulator: an in-process broker (aedes, MQTT 3.1.1) and a
 * publisher that publishes each simulated machine on the default mapping's
 * topics every 500 ms, with a retained availability message and a last will.
 * A gateway machine with `driver: 'mqtt'` and empty driverOptions reads it.
 */
import type { ProtocolSimulatorOptions, RunningSimulator, SimulatedMachineSpec, StartSimulator } from '../protocol-simulator.js';
import { InProcessBroker } from '../../core/mqtt/broker.js';
import { SIMULATOR_TOPICS } from './default-mapping.js';
import { startMqttPublisher, type RunningPublisher } from './publisher.js';

/** Suggested port of the MQTT simulator under `npm run sim`. */
export const MQTT_SIMULATOR_PORT = 1883;

export interface MqttSimulatorOptions extends ProtocolSimulatorOptions {
  /** Publishing period, ms (500 unless told otherwise). */
  intervalMs?: number;
}

/** The running simulator, with its broker and publisher for tests that fault one of them. */
export interface RunningMqttSimulator extends RunningSimulator {
  broker: InProcessBroker;
  publisher: RunningPublisher;
}

export async function startMqttSimulator(options: MqttSimulatorOptions): Promise<RunningMqttSimulator> {
  const broker = new InProcessBroker({ host: options.host ?? '127.0.0.1', port: options.port ?? 0 });
  await broker.start();
  let publisher: RunningPublisher;
  try {
    publisher = await startMqttPublisher({
      url: broker.url,
      machines: options.machines,
      ...(options.intervalMs !== undefined ? { intervalMs: options.intervalMs } : {}),
      ...(options.now ? { now: options.now } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    });
  } catch (error) {
    await broker.stop();
    throw error;
  }
  let closing: Promise<void> | undefined;
  const intervalMs = options.intervalMs ?? 500;
  return {
    scheme: 'mqtt',
    broker,
    publisher,
    get host() {
      return broker.host;
    },
    get port() {
      return broker.port;
    },
    describe() {
      const prefix = (pattern: string) => pattern.replace('{machineID}', '<machineID>');
      return [
        `MQTT broker ${broker.url} (MQTT 3.1.1, no authentication)`,
        `every ${intervalMs} ms: ${prefix(SIMULATOR_TOPICS.status)}, ${prefix(SIMULATOR_TOPICS.alarms)}, ${prefix(SIMULATOR_TOPICS.motion)}, ` +
          `${prefix(SIMULATOR_TOPICS.times)} (JSON) and ${prefix(SIMULATOR_TOPICS.count)}/<counter> (plain values)`,
        `presence: ${prefix(SIMULATOR_TOPICS.availability)} retained 'online', last will 'offline'`,
        ...options.machines.map((m) => `  ${m.machineID}: ${m.system} ${m.machineType}`),
      ];
    },
    machineConfig(machine: SimulatedMachineSpec) {
      return {
        machineID: machine.machineID,
        name: `MQTT ${machine.machineID}`,
        system: machine.system,
        machineType: machine.machineType,
        driver: 'mqtt',
        ip: broker.host,
        port: broker.port,
        driverOptions: {},
      };
    },
    close() {
      closing ??= (async () => {
        await publisher.close();
        await broker.stop();
      })();
      return closing;
    },
  };
}

const _contract: StartSimulator = startMqttSimulator;
void _contract;
