import { afterAll, expect, it } from 'vitest';
import { OpcuaClient } from '../../../drivers/opcua/index.js';
import { startOpcuaServer, type RunningOpcuaSimulator } from '../../../drivers/opcua/simulator.js';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { expectRecovered, runPeerFaultScenario } from '../../fixtures/peer-faults.js';
import { MILL } from './helpers.js';

const REQUEST_TIMEOUT_MS = 1_000;
const ATTEMPTS = 3;
const INTERVAL_MS = 200;

let sim: RunningOpcuaSimulator | undefined;
let tg: TestGateway | undefined;

afterAll(async () => {
  await tg?.stop();
  await sim?.close();
});

// Going offline and coming back with a fresh sample is the conformance suite's (test/drivers/conformance.test.ts);
// what only OPC UA has is checked here: after the restart the client subscribes again, and changes arrive without polling.
it('GW-20 after the OPC UA server restarts, the client subscribes again and a change reaches the machine without a polled read', async () => {
  sim = await startOpcuaServer({ machines: [MILL] });
  const port = sim.port;
  const config = sim.machineConfig(MILL) as { driverOptions: Record<string, unknown> };
  tg = await startTestGateway({
    machines: [
      {
        ...config,
        name: 'OPC UA mill',
        // The first connect may create the client certificate, which takes a few seconds on a busy host.
        driverOptions: { ...config.driverOptions, requestTimeoutMs: REQUEST_TIMEOUT_MS, connectTimeoutMs: 10_000 },
        tasks: {
          CNCStatus: { enabled: true, intervalMs: INTERVAL_MS },
          Count: { enabled: false }, Cycle: { enabled: false }, TimeData: { enabled: false }, ToolLife: { enabled: false }, OEE: { enabled: false },
        },
        connection: { backoffBaseMs: 100, backoffMaxMs: 1_000, failuresBeforeLost: ATTEMPTS, requestTimeoutMs: 2_000, connectTimeoutMs: 12_000 },
      },
    ],
  });
  const gateway = tg;
  const client = () => {
    const c = gateway.gateway.fleet.client(MILL.machineID);
    if (!(c instanceof OpcuaClient)) throw new Error('the machine must be read by the opcua driver');
    return c;
  };
  const subscriptionsBefore = { count: 0 };

  const report = await runPeerFaultScenario(gateway, {
    machineID: MILL.machineID,
    peer: {
      stop: async () => {
        subscriptionsBefore.count = client().stats.subscriptionsCreated;
        await sim?.close();
      },
      start: async () => {
        sim = await startOpcuaServer({ machines: [MILL], port });
      },
    },
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    attempts: ATTEMPTS,
    samplingIntervalMs: INTERVAL_MS,
    afterRestart: async () => {
      const c = client();
      expect(c.stats.subscriptionsCreated).toBeGreaterThan(subscriptionsBefore.count);
      const polled = c.stats.polledReads;
      sim?.pin(MILL.machineID, 'channelState', 1);
      await expect.poll(() => gateway.gateway.fleet.snapshot(MILL.machineID).cache.CNCStatus?.value?.status.cncStatus, { timeout: 5_000 }).toBe('Interrupted');
      expect(c.stats.polledReads).toBe(polled);
    },
  });
  expectRecovered(report);
}, 60_000);
