/**
 * Publishes simulated machines to an MQTT broker (the in-process one or any
 * other, e.g. Mosquitto), the way a shop-floor adapter would: one MQTT client
 * per machine, a retained `online` on its availability topic with a last will
 * `offline`, and the machine's values every interval on the topics of the
 * default mapping (drivers/mqtt/default-mapping.ts).
 */
import type { Logger } from 'pino';
import type { MqttClient } from 'mqtt';
import type { SimulatedMachineSpec } from '../protocol-simulator.js';
import { simulatorOptionsSchema } from '../simulator/options.js';
import { SimulatedMachine } from '../simulator/model.js';
import { EMERGENCY_STOP_WORDS, EXECUTION_WORDS, MODE_WORDS, SEVERITY_WORDS, SIMULATOR_TOPICS } from './default-mapping.js';
import { resolveTopic } from './topics.js';

export interface MqttPublisherOptions {
  /** Broker URL, e.g. mqtt://127.0.0.1:1883. */
  url: string;
  machines: readonly SimulatedMachineSpec[];
  /** Publishing period, ms. */
  intervalMs?: number;
  /** Clock of the machine model, unix ms. */
  now?: () => number;
  username?: string;
  password?: string;
  /** 4 (MQTT 3.1.1, the default) or 5. */
  protocolVersion?: 4 | 5;
  /** Delay between reconnect attempts after the broker went away, ms. */
  reconnectMs?: number;
  /** CA certificate (PEM) for an mqtts broker with a private CA. */
  ca?: string | Buffer;
  logger?: Logger;
}

/** A running publisher. */
export interface RunningPublisher {
  /** The model behind each machineID. */
  readonly models: ReadonlyMap<string, SimulatedMachine>;
  /** Drops the machine's socket without a DISCONNECT, so the broker sends its last will; it stays away until `resume`. */
  crash(machineID: string): Promise<void>;
  /** Reconnects a crashed machine. */
  resume(machineID: string): Promise<void>;
  /** Publishes every connected machine's values now. */
  publishNow(): void;
  /** Disconnects every machine and stops the timer. Safe to call twice. */
  close(): Promise<void>;
}

/** The topic suffix and payload of every message one publish round sends for `machine`. */
export function machineMessages(machine: SimulatedMachine, machineID: string): Array<[topic: string, payload: string]> {
  const topic = (pattern: string) => resolveTopic(pattern, machineID);
  const s = machine.status();
  const fs = machine.feedAndSpindle();
  const tool = machine.toolNumber();
  const t = machine.timeData();
  const c = machine.count();
  const messages: Array<[string, string]> = [
    [
      topic(SIMULATOR_TOPICS.status),
      JSON.stringify({
        controller: s.cncStatus,
        execution: EXECUTION_WORDS[s.adjustedStatus],
        mode: MODE_WORDS[s.mode],
        severity: SEVERITY_WORDS[s.alarmLevel],
        alarmActive: s.alarmStatus,
        emergencyStop: s.emergency ? EMERGENCY_STOP_WORDS.engaged : EMERGENCY_STOP_WORDS.released,
        programStatus: s.programStatus,
        program: s.program,
        timestamp: s.time,
      }),
    ],
    [
      topic(SIMULATOR_TOPICS.alarms),
      JSON.stringify(machine.alarms().map((a) => ({ code: a.code, message: a.message, severity: SEVERITY_WORDS[a.level], since: a.since }))),
    ],
    [
      topic(SIMULATOR_TOPICS.motion),
      JSON.stringify({
        feed: { actual: fs.feedRate, override: fs.feedOverride },
        spindle: { speed: fs.spindleSpeed, override: fs.spindleOverride },
        rapidOverride: fs.rapidOverride,
        tool: { number: tool.toolNumber, offset: tool.offsetNumber },
        axes: machine.positions(),
        loads: machine.loads(),
      }),
    ],
    [topic(SIMULATOR_TOPICS.times), JSON.stringify({ powerOnSec: t.powerOnTime, operatingSec: t.operatingTime, cuttingSec: t.cuttingTime, cycleSec: t.cycleTime })],
  ];
  const counters: Array<[string, number | string | undefined]> = [
    ['partCount', c.partCount], ['partsRequired', c.partsRequired], ['partsTotal', c.partsTotal], ['lastCycleTime', c.lastCycleTime], ['program', c.program],
  ];
  for (const [field, value] of counters) if (value !== undefined) messages.push([`${topic(SIMULATOR_TOPICS.count)}/${field}`, String(value)]);
  return messages;
}

/** The machine model a simulator spec stands for, with the simulator driver's defaults. */
export function simulatedMachine(spec: SimulatedMachineSpec, now: () => number): SimulatedMachine {
  const options = simulatorOptionsSchema.parse({ seed: spec.seed, machineType: spec.machineType, system: spec.system, timeScale: spec.timeScale ?? 1 });
  return new SimulatedMachine({ ...options, seed: spec.seed }, now);
}

/** Starts publishing `machines` to the broker at `url`; clients keep reconnecting while the broker is away. */
export async function startMqttPublisher(options: MqttPublisherOptions): Promise<RunningPublisher> {
  const { connect } = await import('mqtt');
  const now = options.now ?? Date.now;
  const models = new Map(options.machines.map((spec) => [spec.machineID, simulatedMachine(spec, now)]));
  const clients = new Map<string, MqttClient>();
  let closed = false;

  const open = (machineID: string): MqttClient => {
    const availability = resolveTopic(SIMULATOR_TOPICS.availability, machineID);
    const client = connect(options.url, {
      clientId: `cnc-sim-${machineID}`,
      protocolVersion: options.protocolVersion ?? 4,
      clean: true,
      keepalive: 10,
      connectTimeout: 2000,
      reconnectPeriod: options.reconnectMs ?? 250,
      queueQoSZero: false,
      will: { topic: availability, payload: Buffer.from('offline'), qos: 1, retain: true },
      ...(options.username !== undefined ? { username: options.username } : {}),
      ...(options.password !== undefined ? { password: options.password } : {}),
      ...(options.ca !== undefined ? { ca: options.ca } : {}),
    });
    client.on('connect', () => client.publish(availability, 'online', { qos: 1, retain: true }));
    client.on('error', (error) => options.logger?.debug({ machineID, err: error.message }, 'mqtt simulator publisher error'));
    clients.set(machineID, client);
    return client;
  };

  const publishNow = () => {
    for (const [machineID, client] of clients) {
      const model = models.get(machineID);
      if (!model || !client.connected) continue;
      for (const [topic, payload] of machineMessages(model, machineID)) client.publish(topic, payload, { qos: 0 });
    }
  };

  const end = (client: MqttClient) =>
    new Promise<void>((resolve) => {
      const bound = setTimeout(resolve, 1000);
      client.end(true, {}, () => {
        clearTimeout(bound);
        resolve();
      });
    });

  for (const machineID of models.keys()) open(machineID);
  const timer = setInterval(publishNow, options.intervalMs ?? 500);

  return {
    models,
    async crash(machineID) {
      const client = clients.get(machineID);
      clients.delete(machineID);
      // A forced end destroys the socket without DISCONNECT: the broker treats it as a crash and sends the will.
      if (client) await end(client);
    },
    async resume(machineID) {
      if (!closed && !clients.has(machineID) && models.has(machineID)) open(machineID);
    },
    publishNow,
    async close() {
      closed = true;
      clearInterval(timer);
      const all = [...clients.values()];
      clients.clear();
      await Promise.all(all.map((client) => end(client)));
    },
  };
}
