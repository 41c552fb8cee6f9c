import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { expectRecovered, runPeerFaultScenario, type Peer } from '../../fixtures/peer-faults.js';
import type { RunningSimulator } from '../../../drivers/protocol-simulator.js';
import { startFocasSimulator } from '../../../drivers/focas/simulator.js';
import { MC } from './bridge-fixtures.js';

const REQUEST_TIMEOUT_MS = 500;
const ATTEMPTS = 3;
const STATUS_INTERVAL_MS = 200;

let tg: TestGateway | undefined;
let bridge: RunningSimulator | undefined;
afterAll(async () => {
  await tg?.stop();
  await bridge?.close();
});

describe('focas driver fault recovery', () => {
  it('GW-20 killing the FOCAS bridge takes the machine offline with statusStale within timeout × attempts + one interval, and a restart brings it back', async () => {
    bridge = await startFocasSimulator({ machines: [MC] });
    const port = bridge.port;
    const peer: Peer = {
      start: async () => {
        bridge = await startFocasSimulator({ machines: [MC], port });
      },
      stop: async () => {
        await bridge?.close();
      },
    };
    const machine = {
      ...bridge.machineConfig(MC),
      driverOptions: { cnc: MC.machineID, requestTimeoutMs: REQUEST_TIMEOUT_MS, connectTimeoutMs: 1000 },
      tasks: { CNCStatus: { enabled: true, intervalMs: STATUS_INTERVAL_MS } },
      connection: { backoffBaseMs: 100, backoffMaxMs: 1000, failuresBeforeLost: ATTEMPTS, requestTimeoutMs: 2000, connectTimeoutMs: 3000 },
    };
    expect(machine).toMatchObject({ driver: 'focas', ip: '127.0.0.1', port });
    tg = await startTestGateway({ machines: [machine] });

    const report = await runPeerFaultScenario(tg, {
      machineID: MC.machineID,
      peer,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      attempts: ATTEMPTS,
      samplingIntervalMs: STATUS_INTERVAL_MS,
      downMs: 2500,
      afterRestart: async () => {
        // Sampling resumed through a new session: the cached status is a real FOCAS reading again.
        const view = tg!.gateway.fleet.snapshot(MC.machineID);
        expect(view.connection.state).toBe('online');
        expect(view.cache.CNCStatus?.value?.status.mode).not.toBe(undefined);
      },
    });
    process.stdout.write(`focas GW-20: offline after ${report.offlineAfterMs} ms (bound ${report.boundMs} ms), back after ${report.backOnlineAfterMs} ms\n`);
    expectRecovered(report);
    expect(report.offlineAfterMs).toBeLessThanOrEqual(REQUEST_TIMEOUT_MS * ATTEMPTS + STATUS_INTERVAL_MS);
  });
});
