/**
 * What a claim costs: a deployment claimed before any transfer of it was
 * opened (nobody sent it) is sent as a new one, with no read-back before its
 * upload; one whose transfer had been opened at its former holder is read
 * back first, and not sent again when the machine holds it whole. Counted at
 * scripted machines behind a real gateway over HTTP.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpGatewayLink } from '../../../core/gateway-link/http.js';
import { DEPLOYMENT_MACHINE_VERSION } from '../../../plugins/deployments/machine.js';
import type { DeploymentRow } from '../../../plugins/deployments/store.js';
import type { FleetMachine } from '../../../plugins/gateways/service.js';
import { sqliteEngine } from '../../fixtures/database-engines.js';
import { deploymentInstance } from '../../fixtures/deployment-instance.js';
import type { TestGateway } from '../../fixtures/gateway.js';
import { startScriptedGateway } from '../../fixtures/scripted-gateway.js';
import { scriptedMachine } from '../../fixtures/scripted-machine.js';
import { until } from '../../fixtures/until.js';
import { batchOf } from './store-cases.js';

const DIR = '//CNC_MEM/USER/PATH1/';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const engine = sqliteEngine();

describe('claimed deployments', () => {
  const MACHINES = ['FC1', 'FC2', 'FC3', 'FC4'];
  const fleet: FleetMachine[] = MACHINES.map((machineId, i) => ({
    id: `mch_fc${i + 1}`, gatewayId: 'gw_1', machineId, name: machineId, driver: 'scripted', system: 'FANUC', model: '0i-MF', present: true, programDir: DIR, transformProfile: null,
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
    engine.remove();
  });

  it('PV-24 a claimed deployment never opened is sent without a read-back first; one opened at its former holder is read back first and not sent again when the machine holds it whole', async () => {
    const database = await engine.fresh();
    const instance = await deploymentInstance(database, 'fresh-claims', fleet, () => link, { leaseMs: 5000, takeOverAtStart: false });
    const content = Buffer.from('%\nO4000 (CLAIMED)\nG01 X1. F300\nM30\n%\n');
    const planned = fleet.map((m, i) => ({ id: `dep_fc${i + 1}`, assignmentId: 'asg_1', machineId: m.id, gatewayId: m.gatewayId, dir: DIR, fileName: 'O4000', content, sha256: sha(content) }));
    const machines = MACHINES.map(scriptedMachine);
    // The fourth machine got the whole file from the former holder before it stopped.
    machines[3]?.files.set(`${DIR}O4000`, content);
    await instance.db.write(async (tx) => {
      await instance.repo.insertBatch(tx, batchOf('bat_fc', null, Date.now()), planned, DEPLOYMENT_MACHINE_VERSION);
      await tx.run('UPDATE deploy_deployments SET holder = NULL, lease_until = NULL');
      // The last two had their transfer opened at the former holder.
      await tx.run('UPDATE deploy_deployments SET transfers = 1 WHERE id IN (?, ?)', [planned[2]?.id as string, planned[3]?.id as string]);
    }, { transaction: true });
    try {
      expect(await instance.runner.resumeAll()).toBe(planned.length);
      const rows = (): Promise<DeploymentRow[]> => Promise.all(planned.map(async (d) => (await instance.repo.get(d.id)) as DeploymentRow));
      const done = await until('every deployment finished', rows, (all) => all.every((r) => r.finishedAt !== null));
      expect(done.map((r) => r.status)).toEqual(planned.map(() => 'Succeeded'));
      // Reads of the file at each machine, and uploads: never opened, one read (the verifying one) after one upload;
      // opened before, a read-back first, then the upload (or none: the file was there whole), then the verifying read.
      const events = machines.map((m) => m.fileEvents.map((e) => e.kind).filter((k) => k === 'read' || k === 'upload-begun'));
      expect(events).toEqual([['upload-begun', 'read'], ['upload-begun', 'read'], ['read', 'upload-begun', 'read'], ['read', 'read']]);
    } finally {
      await instance.runner.stop();
      await instance.db.close();
    }
  }, 60_000);
});
