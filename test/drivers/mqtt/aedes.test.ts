/**
 * The MQTT driver against aedes in process: the shared scenarios, plus what
 * only the in-process broker is used for here: TLS with a throw-away
 * certificate made by the openssl CLI, and aedes refusing MQTT 5.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { GatewayError } from '../../../core/interfaces/errors.js';
import { InProcessBroker } from '../../../core/mqtt/broker.js';
import { mqttDriver, type MqttOptionsInput } from '../../../drivers/mqtt/index.js';
import { startMqttPublisher, type RunningPublisher } from '../../../drivers/mqtt/publisher.js';
import { startMqttSimulator } from '../../../drivers/mqtt/simulator.js';
import { aedesBrokers } from './broker-controller.js';
import { selfSignedCertificate } from '../../fixtures/self-signed.js';
import { mqttScenarios } from './scenarios.js';

mqttScenarios(aedesBrokers);

const dir = mkdtempSync(join(tmpdir(), 'mqtt-tls-'));
const machine = { machineID: 'MC-TLS', seed: 5, machineType: 'lathe', system: 'SIEMENS' } as const;

function client(port: number, driverOptions: MqttOptionsInput) {
  const c = mqttDriver.create(
    { machineID: machine.machineID, ip: '127.0.0.1', port, driverOptions: mqttDriver.configSchema.parse(driverOptions) },
    { logger: pino({ level: 'silent' }), dataDir: dir, now: Date.now },
  );
  opened.push(c);
  return c;
}
const opened: Array<ReturnType<typeof mqttDriver.create>> = [];

async function failure(promise: Promise<unknown>): Promise<GatewayError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof GatewayError)) throw new Error(`expected a GatewayError, got ${String(error)}`);
  return error;
}

afterEach(async () => {
  for (const c of opened.splice(0)) await c.close();
});

describe('mqtt driver over TLS (aedes behind tls.createServer)', () => {
  let broker: InProcessBroker;
  let publisher: RunningPublisher;
  const certPath = join(dir, 'cert.pem');

  beforeAll(async () => {
    const tls = selfSignedCertificate(dir);
    broker = new InProcessBroker({ tls: { key: tls.key, cert: tls.cert } });
    await broker.start();
    publisher = await startMqttPublisher({ url: broker.url, machines: [machine], intervalMs: 100, ca: readFileSync(certPath) });
  });
  afterAll(async () => {
    await publisher.close();
    await broker.stop();
  });

  it('reads over mqtts with the CA file, and names the TLS failure without it', async () => {
    const trusted = client(broker.port, { tls: { ca: certPath } });
    await trusted.connect();
    expect((await trusted.read('status')).cncStatus).toBeTypeOf('string');

    const untrusted = await failure(client(broker.port, { tls: {} }).connect());
    expect(untrusted.errorName).toBe('DRIVER_REQUEST_FAILED');
    expect(untrusted.message).toMatch(/TLS handshake with broker mqtts:\/\/127\.0\.0\.1:\d+ failed \(DEPTH_ZERO_SELF_SIGNED_CERT/);

    const missing = await failure(client(broker.port, { tls: { ca: join(dir, 'no-such-ca.pem') } }).connect());
    expect(missing.message).toMatch(/cannot read driverOptions\.tls\.ca file '.*no-such-ca\.pem' \(ENOENT\)/);
  });
});

describe('mqtt driver and aedes limits', () => {
  it('reports that aedes refuses MQTT 5 and names the setting to change', async () => {
    const broker = new InProcessBroker();
    await broker.start();
    try {
      const refused = await failure(client(broker.port, { protocolVersion: 5 }).connect());
      expect(refused.errorName).toBe('DRIVER_REQUEST_FAILED');
      expect(refused.message).toMatch(/does not accept MQTT 5 .*set driverOptions\.protocolVersion to 4/);
    } finally {
      await broker.stop();
    }
  });
});

describe('mqtt simulator', () => {
  it('serves its machines to a gateway machine config with empty driverOptions and closes cleanly', async () => {
    const sim = await startMqttSimulator({ machines: [machine], intervalMs: 100 });
    try {
      const config = sim.machineConfig(machine);
      expect(config).toMatchObject({ driver: 'mqtt', ip: '127.0.0.1', port: sim.port, driverOptions: {} });
      const c = client(sim.port, config.driverOptions as MqttOptionsInput);
      await c.connect();
      expect((await c.read('count')).partsTotal).toBeGreaterThan(0);
      expect(sim.describe().join('\n')).toContain(`mqtt://127.0.0.1:${sim.port}`);
    } finally {
      await sim.close();
      await sim.close();
    }
    expect(sim.broker.running).toBe(false);
  });
});
