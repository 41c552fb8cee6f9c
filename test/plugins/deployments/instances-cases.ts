/**
 * Two program-service instances' deployment runners on one database, on
 * every engine: SQLite (one file opened twice, test/plugins/deployments/instances.test.ts)
 * and PostgreSQL (test/peers/deployments-instances-postgres.test.ts). Each
 * runner has its own database connections, holder id and link to one real
 * gateway of scripted machines, which count the uploads that reach them.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InProcessGatewayLink } from '../../../core/gateway-link/in-process.js';
import type { SqlDatabase } from '../../../core/store/sql-database.js';
import { DEPLOYMENT_MACHINE_VERSION } from '../../../plugins/deployments/machine.js';
import { TRANSFERS_PER_GATEWAY } from '../../../plugins/deployments/runner.js';
import type { DeploymentRow } from '../../../plugins/deployments/store.js';
import type { FleetMachine } from '../../../plugins/gateways/service.js';
import type { EngineUnderTest } from '../../fixtures/database-engines.js';
import { deploymentInstance, type DeploymentInstance } from '../../fixtures/deployment-instance.js';
import { startTestGateway, type TestGateway } from '../../fixtures/gateway.js';
import { DRIVERS_WITH_SCRIPTED, scriptedMachine, scriptedMachineConfig } from '../../fixtures/scripted-machine.js';
import { batchOf } from './store-cases.js';

const LEASE_MS = 1500;
const DIR = '//CNC_MEM/USER/PATH1/';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Instance = DeploymentInstance;

export function instancesCases(engine: EngineUnderTest, prefix: string): void {
  describe(`two deployment runners on one ${engine.name} database`, () => {
    const MACHINES = Array.from({ length: 24 }, (_, i) => `${prefix}-M${String(i + 1).padStart(2, '0')}`);
    const fleet: FleetMachine[] = MACHINES.map((machineId, i) => ({
      id: `mch_${prefix}${i + 1}`, gatewayId: 'gw_1', machineId, name: machineId, driver: 'scripted', system: 'FANUC', model: '0i-MF', present: true, programDir: DIR, transformProfile: null,
    }));
    let gw: TestGateway;
    const opened: SqlDatabase[] = [];

    beforeAll(async () => {
      gw = await startTestGateway({ machines: MACHINES.map(scriptedMachineConfig) }, undefined, { drivers: DRIVERS_WITH_SCRIPTED });
      for (const id of MACHINES) scriptedMachine(id).uploadDelayMs = 600;
    }, 30_000);
    afterAll(async () => {
      for (const db of opened.splice(0)) await db.close();
      await gw?.stop();
    });

    const instance = async (database: { open(): Promise<SqlDatabase> }, holder: string): Promise<Instance> => {
      const link = new InProcessGatewayLink(gw.gateway.context.interfaces);
      const made = await deploymentInstance(database, holder, fleet, () => link, { leaseMs: LEASE_MS, takeOverAtStart: false, claimLimit: 4 });
      opened.push(made.db);
      return made;
    };

    const rowsOf = async (db: SqlDatabase, batchId: string) => (await db.all<{ id: string }>('SELECT id FROM deploy_deployments WHERE batch_id = ? ORDER BY id', [batchId])).map((r) => r.id);
    const all = async (i: Instance, batchId: string): Promise<DeploymentRow[]> => Promise.all((await rowsOf(i.db, batchId)).map(async (id) => (await i.repo.get(id))!));

    it('PV-24 a batch split between two instances, one stopped hard mid-batch: the other takes its deployments over and every one ends once, each machine given the file once', async () => {
      const database = await engine.fresh();
      const a = await instance(database, `${prefix}-instance-a`);
      const b = await instance(database, `${prefix}-instance-b`);
      const content = Buffer.from(`%\nO1000 (${prefix} LEASES)\n${Array.from({ length: 200 }, (_, i) => `N${i + 1} G01 X${i}. F300`).join('\n')}\nM30\n%\n`);
      const planned = fleet.map((m, i) => ({ id: `dep_${prefix}${String(i + 1).padStart(2, '0')}`, assignmentId: 'asg_1', machineId: m.id, gatewayId: m.gatewayId, dir: DIR, fileName: 'O1000', content, sha256: sha(content) }));
      // Stored with no holder yet (as by a version before leases): both instances claim it, each what it can start soon at the
      // gateway (its transfer slots and as many again, four rows to a statement), the rest left for later claims.
      await a.db.write(async (tx) => {
        await a.repo.insertBatch(tx, batchOf(`bat_${prefix}`, null, Date.now()), planned, DEPLOYMENT_MACHINE_VERSION);
        await tx.run('UPDATE deploy_deployments SET holder = NULL, lease_until = NULL');
      }, { transaction: true });
      expect(await Promise.all([a.runner.resumeAll(), b.runner.resumeAll()])).toEqual([2 * TRANSFERS_PER_GATEWAY, 2 * TRANSFERS_PER_GATEWAY]);

      // Stop an instance hard once some of its machines have the file and others wait for a transfer slot: no further write, no lease given back.
      let victim: Instance | undefined;
      let unfinishedAtKill: DeploymentRow[] = [];
      const machineOf = new Map(fleet.map((m) => [m.id, m.machineId]));
      for (const deadline = Date.now() + 20_000; !victim; await sleep(10)) {
        // One statement, so what is read is as fresh as can be.
        const rows = await a.db.all<{ id: string; holder: string | null; status: string; machine_id: string }>('SELECT id, holder, status, machine_id FROM deploy_deployments WHERE batch_id = ? ORDER BY id', [`bat_${prefix}`]);
        const held = (i: Instance) => rows.filter((r) => r.holder === i.holder);
        // Those waiting for a slot are asked of the runner itself just before the stop: the states read trail the actors by a
        // write round or more, and a stop waits for the writes under way, so rows read as transferring may all have ended by the
        // time it returns; those waiting for a slot have not.
        const ready = (i: Instance) => held(i).some((r) => scriptedMachine(machineOf.get(r.machine_id) as string).uploads > 0)
          && held(i).filter((r) => i.runner.waitingForSlot(r.id)).length >= 2 && held(i === a ? b : a).length > 0;
        const big = [a, b].sort((x, y) => held(y).length - held(x).length).find(ready);
        if (big) {
          await big.runner.stop({ release: false });
          victim = big;
          unfinishedAtKill = (await all(a, `bat_${prefix}`)).filter((r) => r.holder === big.holder && r.finishedAt === null);
        }
        if (Date.now() > deadline) throw new Error(`no moment to stop an instance mid-batch: ${rows.map((r) => `${r.holder} ${r.status}`).join(', ')}`);
      }
      const survivor = victim === a ? b : a;
      expect(unfinishedAtKill.length).toBeGreaterThan(0);

      let rows: DeploymentRow[];
      for (const deadline = Date.now() + 30_000; ; await sleep(50)) {
        rows = await all(survivor, `bat_${prefix}`);
        if (rows.every((r) => r.finishedAt !== null)) break;
        if (Date.now() > deadline) throw new Error(`not finished: ${rows.map((r) => `${r.holder} ${r.status}`).join(', ')}`);
      }
      expect(rows.map((r) => [r.status, r.readBackSha256])).toEqual(rows.map(() => ['Succeeded', sha(content)]));
      // What the stopped instance left is finished by the survivor.
      const after = new Map(rows.map((r) => [r.id, r]));
      for (const r of unfinishedAtKill) expect(after.get(r.id)?.holder).toBe(survivor.holder);
      // Counted at the machines: one upload each, and each holds the verified bytes.
      for (const id of MACHINES) {
        const m = scriptedMachine(id);
        expect({ id, uploads: m.uploads, sha: sha(m.files.get(`${DIR}O1000`) ?? Buffer.alloc(0)) }).toEqual({ id, uploads: 1, sha: sha(content) });
      }
      // One final status and one final audit record per deployment.
      const finals = await survivor.db.all<{ entity_id: string; n: number }>(
        "SELECT entity_id, COUNT(*) AS n FROM audit_log WHERE action IN ('deployment.succeeded', 'deployment.failed') GROUP BY entity_id ORDER BY entity_id",
      );
      expect(finals.map((f) => [f.entity_id, Number(f.n)])).toEqual(planned.map((d) => [d.id, 1]));
      await survivor.runner.stop();
    }, 60_000);

    it('PV-24 instances share each gateway of a batch: an instance claims per gateway only what it can start soon, so another instance transfers at every gateway too', async () => {
      const database = await engine.fresh();
      const a = await instance(database, `${prefix}-share-a`);
      const b = await instance(database, `${prefix}-share-b`);
      // Two gateway ids (the runner's transfer slots are per gateway), both served by the one test gateway.
      const gatewayOf = (i: number) => (i < MACHINES.length / 2 ? 'gw_1' : 'gw_2');
      for (const id of MACHINES) {
        scriptedMachine(id).files.clear();
        scriptedMachine(id).uploads = 0;
      }
      const content = Buffer.from(`%\nO1001 (${prefix} SHARED)\nG00 X0.\nM30\n%\n`);
      const planned = fleet.map((m, i) => ({ id: `dep_${prefix}s${String(i + 1).padStart(2, '0')}`, assignmentId: 'asg_1', machineId: m.id, gatewayId: gatewayOf(i), dir: DIR, fileName: 'O1001', content, sha256: sha(content) }));
      await a.db.write(async (tx) => {
        await a.repo.insertBatch(tx, batchOf(`bat_${prefix}s`, null, Date.now()), planned, DEPLOYMENT_MACHINE_VERSION);
        await tx.run('UPDATE deploy_deployments SET holder = NULL, lease_until = NULL');
      }, { transaction: true });
      const held = async () => a.db.all<{ holder: string | null; gateway_id: string; n: number }>(
        'SELECT holder, gateway_id, COUNT(*) AS n FROM deploy_deployments WHERE batch_id = ? GROUP BY holder, gateway_id', [`bat_${prefix}s`],
      );
      const most = 2 * TRANSFERS_PER_GATEWAY;
      const perGateway = MACHINES.length / 2;
      // The first instance claims alone: its slots and as many again at each gateway, not the whole batch.
      expect(await a.runner.resumeAll()).toBe(2 * most);
      expect(new Set((await held()).map((r) => `${r.holder ?? 'nobody'} ${r.gateway_id} ${Number(r.n)}`))).toEqual(new Set([
        `${a.holder} gw_1 ${most}`, `${a.holder} gw_2 ${most}`, `nobody gw_1 ${perGateway - most}`, `nobody gw_2 ${perGateway - most}`,
      ]));
      // The second finds the rest claimable at both gateways.
      expect(await b.runner.resumeAll()).toBe(2 * (perGateway - most));
      let rows: DeploymentRow[];
      for (const deadline = Date.now() + 30_000; ; await sleep(50)) {
        rows = await all(a, `bat_${prefix}s`);
        if (rows.every((r) => r.finishedAt !== null)) break;
        if (Date.now() > deadline) throw new Error(`not finished: ${rows.map((r) => `${r.holder} ${r.status}`).join(', ')}`);
      }
      expect(rows.map((r) => r.status)).toEqual(rows.map(() => 'Succeeded'));
      // Each gateway's deployments were finished by both instances.
      for (const gatewayId of ['gw_1', 'gw_2']) expect(new Set(rows.filter((r) => r.gatewayId === gatewayId).map((r) => r.holder))).toEqual(new Set([a.holder, b.holder]));
      for (const id of MACHINES) expect({ id, uploads: scriptedMachine(id).uploads }).toEqual({ id, uploads: 1 });
      await a.runner.stop();
      await b.runner.stop();
    }, 60_000);
  });
}
