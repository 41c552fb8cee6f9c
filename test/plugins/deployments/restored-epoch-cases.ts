/**
 * Epochs after a restore, on every engine: SQLite (test/plugins/deployments/fencing.test.ts)
 * and PostgreSQL (test/peers/deployments-fencing-postgres.test.ts). The
 * program service's database is restored from a backup taken before its
 * gateway saw the latest epochs of some deployments' leases: the gateway,
 * which lived on, refuses every transfer under the older epochs the database
 * hands out. The service must claim each such deployment again above the
 * gateway's epoch and carry on, instead of stopping it as taken over by an
 * instance that does not exist.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpGatewayLink } from '../../../core/gateway-link/http.js';
import { DEPLOYMENT_MACHINE_VERSION } from '../../../plugins/deployments/machine.js';
import type { DeploymentRow } from '../../../plugins/deployments/store.js';
import type { FleetMachine } from '../../../plugins/gateways/service.js';
import type { EngineUnderTest } from '../../fixtures/database-engines.js';
import { deploymentInstance } from '../../fixtures/deployment-instance.js';
import type { TestGateway } from '../../fixtures/gateway.js';
import { startScriptedGateway } from '../../fixtures/scripted-gateway.js';
import { scriptedMachine } from '../../fixtures/scripted-machine.js';
import { until } from '../../fixtures/until.js';
import { batchOf } from './store-cases.js';

const DIR = '//CNC_MEM/USER/PATH1/';
/** The epoch the gateway saw of every lease before the database was restored to epoch 1. */
const GATEWAY_EPOCH = 7;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export function restoredEpochCases(engine: EngineUnderTest, prefix: string): void {
  describe(`epochs after a restore on ${engine.name}`, () => {
    const MACHINES = Array.from({ length: 4 }, (_, i) => `${prefix}-R${i + 1}`);
    const fleet: FleetMachine[] = MACHINES.map((machineId, i) => ({
      id: `mch_${prefix}r${i + 1}`, gatewayId: 'gw_1', machineId, name: machineId, driver: 'scripted', system: 'FANUC', model: '0i-MF', present: true, programDir: DIR, transformProfile: null,
    }));
    let gw: TestGateway;
    let link: HttpGatewayLink;

    beforeAll(async () => {
      const started = await startScriptedGateway(MACHINES);
      gw = started.gw;
      const { url, key } = started;
      link = new HttpGatewayLink(url, key);
    }, 30_000);
    afterAll(async () => {
      await gw?.stop();
    });

    it('PV-24 a database restored to epochs older than its gateway has seen still ends every deployment Succeeded: each is claimed again above the gateway\'s epoch, sent once, and read back first where a transfer had been opened', async () => {
      const database = await engine.fresh();
      const instance = await deploymentInstance(database, `${prefix}-restored`, fleet, () => link, { leaseMs: 2000, takeOverAtStart: false });
      const content = Buffer.from(`%\nO3000 (${prefix} RESTORED)\nG01 X1. F300\nM30\n%\n`);
      const planned = fleet.map((m, i) => ({ id: `dep_${prefix}r${i + 1}`, assignmentId: 'asg_1', machineId: m.id, gatewayId: m.gatewayId, dir: DIR, fileName: 'O3000', content, sha256: sha(content) }));
      const machines = MACHINES.map(scriptedMachine);
      // The third machine already holds the whole file: its transfer ended before the backup's moment was lost.
      machines[2]?.files.set(`${DIR}O3000`, content);
      await instance.db.write(async (tx) => {
        await instance.repo.insertBatch(tx, batchOf(`bat_${prefix}r`, null, Date.now()), planned, DEPLOYMENT_MACHINE_VERSION);
        await tx.run('UPDATE deploy_deployments SET holder = NULL, lease_until = NULL');
        // As the backup holds them: the last two had a transfer opened (under way at their holder then), the first two not yet.
        await tx.run('UPDATE deploy_deployments SET transfers = 1 WHERE id IN (?, ?)', [planned[2]?.id as string, planned[3]?.id as string]);
      }, { transaction: true });
      // What the gateway saw after the backup was taken: a later epoch of each lease, which the restored database never handed out.
      const seen = await link.announceFences(planned.map((d, i) => ({ machineID: MACHINES[i] as string, dir: DIR, name: 'O3000', fence: { lease: d.id, epoch: GATEWAY_EPOCH } })));
      expect(seen.map((a) => a.superseded)).toEqual(planned.map(() => false));
      try {
        expect(await instance.runner.resumeAll()).toBe(planned.length);
        const rows = (): Promise<DeploymentRow[]> => Promise.all(planned.map(async (d) => (await instance.repo.get(d.id)) as DeploymentRow));
        const done = await until('every deployment finished', rows, (all) => all.every((r) => r.finishedAt !== null), 20_000);
        expect(done.map((r) => [r.status, r.reason])).toEqual(done.map(() => ['Succeeded', null]));
        for (const r of done) expect(r.leaseEpoch).toBeGreaterThan(GATEWAY_EPOCH);
        // Once each: the file already there whole is not sent again.
        expect(machines.map((m) => m.fileEvents.filter((e) => e.kind === 'upload-begun').length)).toEqual([1, 1, 0, 1]);
        for (const m of machines) expect(sha(m.files.get(`${DIR}O3000`) ?? Buffer.alloc(0))).toBe(sha(content));
        // The gateway now refuses the epoch it saw before: the raised one is the highest it knows.
        const after = await link.announceFences(planned.map((d, i) => ({ machineID: MACHINES[i] as string, dir: DIR, name: 'O3000', fence: { lease: d.id, epoch: GATEWAY_EPOCH } })));
        expect(after.map((a) => [a.superseded, a.highestEpoch])).toEqual(done.map((r) => [true, r.leaseEpoch]));
      } finally {
        await instance.runner.stop();
        await instance.db.close();
      }
    }, 60_000);
  });
}
