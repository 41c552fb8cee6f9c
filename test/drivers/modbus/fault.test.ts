import { afterEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { expectRecovered, runPeerFaultScenario, type Peer } from '../../fixtures/peer-faults.js';
import { startModbusSimulator } from '../../../drivers/modbus/simulator.js';
import type { RunningSimulator, SimulatedMachineSpec } from '../../../drivers/protocol-simulator.js';

const SPEC: SimulatedMachineSpec = { machineID: 'MB-FAULT', seed: 21, machineType: 'lathe', system: 'FANUC 0i-TF' };
const REQUEST_TIMEOUT_MS = 500;
const ATTEMPTS = 3;
const STATUS_INTERVAL_MS = 200;

/** The simulator as a peer that can die and come back on the port it first got. */
function simulatorPeer(): Peer & { running(): RunningSimulator } {
  let current: RunningSimulator | undefined;
  let port = 0;
  return {
    async start() {
      current = await startModbusSimulator({ port, machines: [SPEC] });
      port = current.port;
    },
    async stop() {
      await current?.close();
    },
    running() {
      if (!current) throw new Error('the simulator has not started');
      return current;
    },
  };
}

let tg: TestGateway | undefined;
let peer: ReturnType<typeof simulatorPeer> | undefined;
afterEach(async () => {
  await tg?.stop();
  await peer?.stop();
  tg = undefined;
  peer = undefined;
});

describe('modbus driver fault recovery', () => {
  it('GW-20 killing the Modbus device takes the machine offline with statusStale within timeout × attempts + one interval, and a restart brings it back', async () => {
    peer = simulatorPeer();
    await peer.start();
    const machine = peer.running().machineConfig(SPEC);
    tg = await startTestGateway({
      machines: [{
        ...machine,
        driverOptions: { ...(machine.driverOptions as object), requestTimeoutMs: REQUEST_TIMEOUT_MS, connectTimeoutMs: 1000 },
        tasks: { CNCStatus: { enabled: true, intervalMs: STATUS_INTERVAL_MS } },
        connection: { backoffBaseMs: 100, backoffMaxMs: 1000, failuresBeforeLost: ATTEMPTS, requestTimeoutMs: 2000, connectTimeoutMs: 3000 },
      }],
    });
    const report = await runPeerFaultScenario(tg, {
      machineID: SPEC.machineID,
      peer,
      requestTimeoutMs: REQUEST_TIMEOUT_MS,
      attempts: ATTEMPTS,
      samplingIntervalMs: STATUS_INTERVAL_MS,
      downMs: 2000,
      afterRestart: async () => {
        // A live read through the HTTP interface goes over the new connection too.
        const live = await tg?.request('GET', `/api/cnc/readCount?machineID=${SPEC.machineID}`);
        expect(live?.body.errorCode).toBe(0);
        expect(live?.body.data).toMatchObject({ machineID: SPEC.machineID, partsTotal: expect.any(Number) as number });
      },
    });
    expectRecovered(report);
    const view = tg.gateway.fleet.snapshot(SPEC.machineID);
    expect(view.connection.state).toBe('online');
    expect(view.cache.CNCStatus?.value).toMatchObject({ status: { adjustedStatus: expect.any(String) as string } });
  });
});
