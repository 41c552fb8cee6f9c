/**
 * What each role's /readyz adds to the runtime's checks: the gateway's
 * `drivers` (every active machine's actor and driver created; a machine
 * that does not answer is not the gateway being unready) and the cloud's
 * `broker` (the embedded broker listening, or the connection to an external
 * one up).
 */
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { registerDriver, type RegisteredDriver } from '../../core/driver-seam/driver.js';
import { InProcessBroker } from '../../core/mqtt/broker.js';
import { DRIVERS } from '../../drivers/registry.js';
import { simulatorDriver } from '../../drivers/simulator/index.js';
import { startTestCloud } from '../fixtures/cloud.js';
import { simMachine, startTestGateway } from '../fixtures/gateway.js';

const toStop: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  while (toStop.length) await (toStop.pop() as () => Promise<unknown>)();
});

interface Readyz { status: number; body: { status: string; checks: Record<string, string> } }
async function readyz(app: { inject(options: { method: 'GET'; url: string }): Promise<{ statusCode: number; json(): unknown }> }): Promise<Readyz> {
  const res = await app.inject({ method: 'GET', url: '/readyz' });
  return { status: res.statusCode, body: res.json() as Readyz['body'] };
}

/** A driver whose client cannot be created (as a driver that throws on a setting it only checks when it builds its client). */
const BROKEN: RegisteredDriver = registerDriver({
  ...simulatorDriver,
  scheme: 'broken',
  create: () => {
    throw new Error('cannot build this client');
  },
});

describe('readiness of the roles', () => {
  it('gateway: ready with drivers ok while a machine is offline (a Modbus machine nothing answers for) and one is inactive', async () => {
    // Port 1 on this host: nothing listens, the connection is refused.
    const gw = await startTestGateway({
      machines: [
        simMachine('M1'),
        { machineID: 'OFF1', name: 'Offline', system: 'FANUC', model: 'x', machineType: 'mill', ip: '127.0.0.1', port: 1, driver: 'modbus', driverOptions: { unitId: 1 }, tasks: { CNCStatus: { enabled: true, intervalMs: 1000 } } },
        simMachine('IDLE', { isActive: false }),
      ],
    });
    toStop.push(() => gw.stop());
    await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
    const answer = await readyz(gw.gateway.http);
    expect(answer.status).toBe(200);
    expect(answer.body.checks).toMatchObject({ drivers: 'ok', database: 'ok', plugins: 'ok', listener: 'ok' });
    expect(gw.gateway.fleet.connectionState('OFF1')).not.toBe('online');
  });

  it('gateway: not ready, drivers failing, while an active machine has no actor and driver; its id stays out of the answer', async () => {
    const gw = await startTestGateway({ machines: [simMachine('M1'), simMachine('BRK7', { driver: 'broken' })] }, undefined, { drivers: [...DRIVERS, BROKEN] });
    toStop.push(() => gw.stop());
    await gw.gateway.listen({ host: '127.0.0.1', port: 0 });
    const answer = await readyz(gw.gateway.http);
    expect(answer.status).toBe(503);
    expect(answer.body.checks.drivers).toBe('failing');
    expect(JSON.stringify(answer.body)).not.toContain('BRK7');
  });

  it('cloud: broker ok while the embedded broker listens, failing once it stopped', async () => {
    const cloud = await startTestCloud();
    toStop.push(() => cloud.stop());
    await cloud.listen('127.0.0.1', 0);
    const { http } = cloud.context;
    expect(await readyz(http)).toMatchObject({ status: 200, body: { checks: { broker: 'ok' } } });
    await cloud.broker?.stop();
    expect(await readyz(http)).toMatchObject({ status: 503, body: { checks: { broker: 'failing' } } });
  });

  it('cloud: with an external broker, broker ok while connected, failing while the connection is down', async () => {
    const external = new InProcessBroker({ host: '127.0.0.1', port: 0 });
    await external.start();
    toStop.push(() => external.stop());
    const cloud = await startTestCloud({ broker: { url: external.url, reconnectMaxMs: 200, protocolVersion: 4 }, logger: pino({ level: 'silent' }) });
    toStop.push(() => cloud.stop());
    await cloud.listen('127.0.0.1', 0);
    const { http } = cloud.context;
    await expect.poll(async () => (await readyz(http)).body.checks.broker, { timeout: 5000 }).toBe('ok');
    expect((await readyz(http)).status).toBe(200);
    await external.stop();
    await expect.poll(async () => (await readyz(http)).body.checks.broker, { timeout: 5000 }).toBe('failing');
    expect((await readyz(http)).status).toBe(503);
  });
});
