import { afterEach, describe, expect, it, vi } from 'vitest';
import { SimulatorClient } from '../../drivers/simulator/index.js';
import { simMachine, startTestGateway, type TestGateway } from '../fixtures/gateway.js';

let gw: TestGateway | undefined;
afterEach(async () => {
  await gw?.stop();
  gw = undefined;
});

describe('fleet against the simulator', () => {
  it('GW-20 a simulated connection loss takes the machine offline with statusStale, and it comes back by itself', async () => {
    gw = await startTestGateway({
      machines: [simMachine('S1', { connection: { backoffBaseMs: 100, backoffMaxMs: 200 } })],
    });
    const g = gw;
    const entry = async () => {
      const res = await g.request('GET', '/api/task/batchReadTaskData?type=CNCStatus&machineIDs=S1');
      return (res.body.data as { state: string; reason: string; statusStale: boolean }[])[0];
    };
    await vi.waitFor(async () => expect((await entry())?.state).not.toMatch(/offline|noData/), { timeout: 5000, interval: 50 });
    const client = g.gateway.fleet.client('S1');
    expect(client).toBeInstanceOf(SimulatorClient);
    (client as SimulatorClient).loseConnection();
    await vi.waitFor(
      async () => {
        const e = await entry();
        expect(e?.state).toBe('offline');
        expect(e?.statusStale).toBe(true);
        expect(e?.reason).toMatch(/connection refused: link down/);
      },
      { timeout: 5000, interval: 50 },
    );
    const errors = await g.request('GET', '/api/task/batchReadErrors?machineIDs=S1');
    expect((errors.body.data as { connection: { errorCode: number } }[])[0]?.connection.errorCode).toBe(2002);
    (client as SimulatorClient).restoreConnection();
    await vi.waitFor(async () => expect((await entry())?.state).not.toMatch(/offline|noData/), { timeout: 5000, interval: 50 });
    expect(g.gateway.fleet.connectionState('S1')).toBe('online');
  });
});
