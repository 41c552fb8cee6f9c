/**
 * The MQTT driver's scenarios, run against every broker kind: aedes in
 * process (test/drivers/mqtt/aedes.test.ts) and a real Mosquitto
 * (test/peers/mqtt-mosquitto.test.ts). Going offline when the broker dies
 * and coming back with it is the driver conformance suite's
 * (test/drivers/conformance/cases.ts), run for both brokers too.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { connectAsync, type MqttClient } from 'mqtt';
import type { ConnectionLost } from '../../../core/driver-seam/driver.js';
import { GatewayError, type ErrorName } from '../../../core/interfaces/errors.js';
import { MqttDriverClient, mqttDriver, type MqttOptionsInput } from '../../../drivers/mqtt/index.js';
import { simulatedMachine, startMqttPublisher } from '../../../drivers/mqtt/publisher.js';
import type { SimulatedMachineSpec } from '../../../drivers/protocol-simulator.js';
import type { BrokerController, BrokerKind } from './broker-controller.js';

const T0 = Date.UTC(2025, 0, 6, 6, 0, 0);
const dataDir = mkdtempSync(join(tmpdir(), 'mqtt-driver-'));

const spec = (machineID: string, seed = 11): SimulatedMachineSpec => ({ machineID, seed, machineType: 'machiningCenter', system: 'FANUC' });

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function rejection(promise: Promise<unknown>, name: ErrorName): Promise<GatewayError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError ${name}, got ${String(error)}`);
  expect(error.errorName, error.message).toBe(name);
  return error;
}

/** Defines the shared scenarios for one broker kind. */

/** What each group of scenarios shares: the broker kind, its broker, and clients closed after each test. */
interface ScenarioContext {
  kind: BrokerKind;
  broker(): BrokerController;
  later(cleanup: () => Promise<void>): void;
  driverClient(machineID: string, options?: MqttOptionsInput, on?: BrokerController, password?: string): MqttDriverClient;
  rawPublisher(protocolVersion?: 4 | 5): Promise<MqttClient>;
}

/** Starts one broker for the describe block and closes each test's clients after it. */
function scenarioContext(kind: BrokerKind): ScenarioContext {
  let broker: BrokerController;
  const cleanups: Array<() => Promise<void>> = [];
  const later = (cleanup: () => Promise<void>) => {
    cleanups.push(cleanup);
  };

  beforeAll(async () => {
    broker = await kind.start();
  });
  afterAll(() => broker.stop());
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  const driverClient = (machineID: string, options: MqttOptionsInput = {}, on: BrokerController = broker, password?: string): MqttDriverClient => {
    const driverOptions = mqttDriver.configSchema.parse(options);
    const machine = { machineID, ip: on.host, port: on.port, driverOptions, ...(password !== undefined ? { password } : {}) };
    const client = mqttDriver.create(machine, { logger: pino({ level: 'silent' }), dataDir, now: Date.now });
    if (!(client instanceof MqttDriverClient)) throw new Error('mqttDriver.create must build an MqttDriverClient');
    later(() => client.close());
    return client;
  };

  const rawPublisher = async (protocolVersion: 4 | 5 = 4) => {
    const client = await connectAsync(broker.url, { protocolVersion, reconnectPeriod: 0 });
    later(() => client.endAsync(true));
    return client;
  };
  return { kind, broker: () => broker, later, driverClient, rawPublisher };
}

/** The default mapping against the simulated machine it publishes. */
function modelScenarios(ctx: ScenarioContext): void {
  const { kind, later, driverClient } = ctx;
  it.each(kind.protocolVersions)('serves every family of the default mapping as the simulated machine has it (protocolVersion %i)', async (protocolVersion) => {
    const machine = spec(`MC-MODEL-${protocolVersion}`);
    const clock = { now: T0 };
    const twin = simulatedMachine(machine, () => clock.now);
    const publisher = await startMqttPublisher({ url: ctx.broker().url, machines: [machine], now: () => clock.now, intervalMs: 100, protocolVersion });
    later(() => publisher.close());
    // Move to a moment with an active alarm, so alarm levels and the alarm list are mapped too.
    while (!twin.alarms().some((alarm) => alarm.level === 'alarm') && clock.now < T0 + 72 * 3_600_000) clock.now += 30_000;
    expect(twin.status().alarmLevel).toBe('alarm');

    const client = driverClient(machine.machineID, { protocolVersion });
    await client.connect();
    expect([...client.families].sort()).toEqual(['alarm', 'count', 'feedAndSpindle', 'load', 'position', 'status', 'timeData', 'toolNumber']);
    expect(await client.read('status')).toEqual(twin.status());
    expect(await client.read('alarm')).toEqual(twin.alarms());
    expect(await client.read('position')).toEqual(twin.positions());
    expect(await client.read('load')).toEqual(twin.loads());
    expect(await client.read('feedAndSpindle')).toEqual(twin.feedAndSpindle());
    expect(await client.read('toolNumber')).toEqual(twin.toolNumber());
    expect(await client.read('timeData')).toEqual(twin.timeData());
    // Each counter is its own retained topic, so a read right after connect may answer before the
    // optional counters (partsRequired, lastCycleTime, program) have arrived: wait until all have.
    const expectedCount = twin.count();
    const count = await until('every counter topic', async () => {
      const read = await client.read('count');
      return Object.keys(read).length === Object.keys(expectedCount).length ? read : undefined;
    });
    expect(count).toEqual(expectedCount);
    await rejection(client.read('toolLife'), 'DRIVER_FAMILY_UNSUPPORTED');
    await rejection(client.downloadProgram(), 'DRIVER_FAMILY_UNSUPPORTED');
  });
}

/** A hand-written mapping: JSON paths, plain values, wildcards and vendor words. */
function mappingScenarios(ctx: ScenarioContext): void {
  const { driverClient, rawPublisher } = ctx;
  it('maps JSON paths, plain values, + and # wildcards and vendor words; an unmapped family is unsupported', async () => {
    const publisher = await rawPublisher();
    const state = (exec: object, alarms: object[]) => JSON.stringify({ exec, alarms });
    await publisher.publishAsync('plant/hall-2/MX-7/state', state({ state: 'RUN', mode: 'AUTOMATIC' }, [{ id: 'A12', text: 'Coolant low', sev: 1 }]), { retain: true });
    await publisher.publishAsync('plant/hall-2/MX-8/state', state({ state: 'ESTOP', mode: 'JOGGING' }, []), { retain: true });
    await publisher.publishAsync('counters/MX-7/parts', '42', { retain: true });
    await publisher.publishAsync('counters/MX-7/total', ' 1042 ', { retain: true });
    await publisher.publishAsync('tools/MX-7/spindle/current', '{"T": 12}', { retain: true });

    const client = driverClient('MX-7', {
      availability: false,
      topics: [
        {
          topic: 'plant/+/{machineID}/state',
          items: {
            'status.adjustedStatus': { path: 'exec.state', map: { RUN: 'RUNNING', IDLE: 'STOPPED', ESTOP: 'EMERGENCY' } },
            'status.mode': { path: 'exec.mode', map: { AUTOMATIC: 'AUTO', JOGGING: 'JOG' } },
          },
          lists: { alarm: { path: 'alarms', fields: { code: 'id', message: 'text', level: 'sev' }, map: { level: { '1': 'warning', '2': 'alarm' } } } },
        },
        { topic: 'counters/{machineID}/parts', items: { 'count.partCount': '' } },
        { topic: 'counters/{machineID}/total', items: { 'count.partsTotal': '' } },
        { topic: 'tools/{machineID}/#', items: { 'toolNumber.toolNumber': 'T' } },
      ],
    });
    const before = Date.now();
    await client.connect();
    expect([...client.families].sort()).toEqual(['alarm', 'count', 'status', 'toolNumber']);
    const status = await client.read('status');
    // Unmapped status fields are derived: cncStatus is the raw word, the alarm level comes from the alarm list.
    expect(status).toEqual({
      cncStatus: 'RUN', adjustedStatus: 'RUNNING', alarmStatus: false, alarmLevel: 'warning', mode: 'AUTO', programStatus: 'running', emergency: false, time: status.time,
    });
    expect(status.time).toBeGreaterThanOrEqual(before);
    const alarms = await client.read('alarm');
    expect(alarms).toEqual([{ code: 'A12', message: 'Coolant low', level: 'warning', since: alarms[0]?.since }]);
    expect(await client.read('count')).toEqual({ partCount: 42, partsTotal: 1042 });
    expect(await client.read('toolNumber')).toEqual({ toolNumber: 12 });
    const unsupported = await rejection(client.read('feedAndSpindle'), 'DRIVER_FAMILY_UNSUPPORTED');
    expect(unsupported.message).toContain("driver 'mqtt' does not support item family 'feedAndSpindle'");

    await publisher.publishAsync('plant/hall-2/MX-7/state', state({ state: 'ESTOP', mode: 'JOGGING' }, [{ id: 'E1', text: 'E-stop', sev: 2 }]));
    const estop = await until('the emergency stop to arrive', async () => {
      const s = await client.read('status');
      return s.adjustedStatus === 'EMERGENCY' ? s : undefined;
    });
    // An engaged emergency stop outranks the alarm beside it (docs/derived-states.md, "Emergency stop").
    expect(estop).toMatchObject({ emergency: true, mode: 'JOG', alarmLevel: 'emergency', alarmStatus: true, programStatus: 'stopped' });

    await publisher.publishAsync('plant/hall-2/MX-7/state', state({ state: 'WEIRD', mode: 'AUTOMATIC' }, []));
    const invalid = await until('the unknown word to be reported', () =>
      client.read('status').then(() => undefined, (error: unknown) => (error instanceof GatewayError ? error : undefined)),
    );
    expect(invalid.errorName).toBe('DRIVER_REQUEST_FAILED');
    expect(invalid.message).toMatch(/status\.adjustedStatus from topic plant\/hall-2\/MX-7\/state, path 'exec\.state': 'WEIRD' is neither in map/);
    for (const topic of ['plant/hall-2/MX-7/state', 'plant/hall-2/MX-8/state', 'counters/MX-7/parts', 'counters/MX-7/total', 'tools/MX-7/spindle/current']) {
      await publisher.publishAsync(topic, '', { retain: true });
    }
  });
}

/** Who may connect, and presence from the last will. */
function accessScenarios(ctx: ScenarioContext): void {
  const { kind, later, driverClient } = ctx;
  it.each(kind.protocolVersions)('accepts the right username and password and refuses others without echoing them (protocolVersion %i)', async (protocolVersion) => {
    const secured = await kind.start({ users: { gateway: 'gw-secret-1', cell: 'cell-secret-2' } });
    later(() => secured.stop());
    const machine = spec(`MC-AUTH-${protocolVersion}`);
    const publisher = await startMqttPublisher({ url: secured.url, machines: [machine], intervalMs: 100, username: 'cell', password: 'cell-secret-2', protocolVersion });
    later(() => publisher.close());

    const good = driverClient(machine.machineID, { username: 'gateway', protocolVersion }, secured, 'gw-secret-1');
    await good.connect();
    expect((await good.read('status')).cncStatus).toBeTypeOf('string');

    const wrong = driverClient(machine.machineID, { username: 'gateway', protocolVersion }, secured, 'wrong-password-9');
    const refused = await rejection(wrong.connect(), 'DRIVER_REQUEST_FAILED');
    expect(refused.message).toMatch(/refused the credentials of user 'gateway'/);
    expect(refused.message).not.toContain('wrong-password-9');
    const anonymous = driverClient(machine.machineID, { protocolVersion }, secured);
    expect((await rejection(anonymous.connect(), 'DRIVER_REQUEST_FAILED')).message).toMatch(/refused anonymous access/);
  });

  it('takes presence from the last will: a crashed publisher makes the machine not connected until it is back', async () => {
    const machine = spec('MC-WILL');
    const publisher = await startMqttPublisher({ url: ctx.broker().url, machines: [machine], intervalMs: 100 });
    later(() => publisher.close());
    const client = driverClient(machine.machineID);
    await client.connect();
    await client.read('status');
    const lost: ConnectionLost[] = [];
    client.onConnectionLost((event) => lost.push(event));

    await publisher.crash(machine.machineID);
    await until('the last will to reach the client', () => lost[0]);
    expect(lost[0]?.reason).toMatch(/reports 'offline' on cnc\/MC-WILL\/availability/);
    await rejection(client.read('status'), 'MACHINE_NOT_CONNECTED');
    await rejection(client.connect(), 'MACHINE_NOT_CONNECTED');

    await publisher.resume(machine.machineID);
    await until('the machine to be back', () => client.connect().then(() => true, () => undefined));
    expect((await client.read('status')).adjustedStatus).toBeTypeOf('string');
    expect(lost).toHaveLength(1);
  });
}

/** Silence: stale topics, an absent machine, and a first value that does not come. */
function silenceScenarios(ctx: ScenarioContext): void {
  const { driverClient, rawPublisher } = ctx;
  it('flags a silent topic stale with its age and timeout, and a silent machine not connected', async () => {
    const publisher = await rawPublisher();
    const client = driverClient('MC-QUIET', {
      availability: false,
      inactivityTimeoutMs: 1500,
      topics: [
        { topic: 'quiet/{machineID}/state', items: { 'status.adjustedStatus': '', 'status.alarmLevel': { path: '', map: { RUNNING: 'none', HOLD: 'none' } } }, inactivityTimeoutMs: 300 },
        { topic: 'quiet/{machineID}/parts', items: { 'count.partCount': 'n', 'count.partsTotal': 'total' }, inactivityTimeoutMs: 0 },
      ],
    });
    await client.connect();
    await publisher.publishAsync('quiet/MC-QUIET/state', 'RUNNING');
    await publisher.publishAsync('quiet/MC-QUIET/parts', '{"n": 3, "total": 9}');
    expect((await client.read('status')).adjustedStatus).toBe('RUNNING');

    const stale = await until('the status to go stale', () =>
      client.read('status').then(() => undefined, (error: unknown) => (error instanceof GatewayError ? error : undefined)),
    );
    expect(stale.errorName).toBe('DRIVER_TIMEOUT');
    expect(stale.message).toMatch(/status\.adjustedStatus is stale: last received \d+\.\d s ago on topic quiet\/MC-QUIET\/state, older than the inactivity timeout of 300 ms/);
    // A topic with inactivityTimeoutMs 0 never goes stale.
    expect(await client.read('count')).toEqual({ partCount: 3, partsTotal: 9 });

    const absent = await until('the machine to count as absent', () =>
      client.read('count').then(() => undefined, (error: unknown) => (error instanceof GatewayError ? error : undefined)),
    );
    expect(absent.errorName).toBe('MACHINE_NOT_CONNECTED');
    expect(absent.message).toMatch(/no message from the machine for \d+\.\d s, longer than inactivityTimeoutMs 1500 ms/);

    await publisher.publishAsync('quiet/MC-QUIET/state', 'HOLD');
    await until('the machine to be present again', () => client.connect().then(() => true, () => undefined));
    expect((await client.read('status')).adjustedStatus).toBe('HOLD');
  });

  it('waits requestTimeoutMs for a first value, then answers DRIVER_TIMEOUT; a value arriving meanwhile answers the read', async () => {
    const publisher = await rawPublisher();
    const client = driverClient('MC-FIRST', {
      availability: false,
      requestTimeoutMs: 300,
      topics: [{ topic: 'first/{machineID}/state', items: { 'status.adjustedStatus': 'state', 'status.alarmLevel': 'level' } }],
    });
    await client.connect();
    const timedOut = await rejection(client.read('status'), 'DRIVER_TIMEOUT');
    expect(timedOut.message).toMatch(/no value for status\.adjustedStatus received yet .* within 300 ms \(driverOptions\.requestTimeoutMs\)/);

    const pending = client.read('status');
    await publisher.publishAsync('first/MC-FIRST/state', '{"state": "STOPPED", "level": "none"}');
    expect(await pending).toMatchObject({ adjustedStatus: 'STOPPED', alarmLevel: 'none', mode: 'UNKNOWN', cncStatus: 'STOPPED' });
  });
}

/** Defines the shared scenarios for one broker kind. */
export function mqttScenarios(kind: BrokerKind): void {
  describe(`mqtt driver against ${kind.name}`, () => {
    const ctx = scenarioContext(kind);
    modelScenarios(ctx);
    mappingScenarios(ctx);
    accessScenarios(ctx);
    silenceScenarios(ctx);
  });
}
