/**
 * How far a holder trusts its hold without asking the database
 * (plugins/deployments/held-rows.ts), with the clock faked: half the lease
 * after the database last confirmed it, then it asks, which renews the lease
 * while it still holds the row and tells it when another instance has
 * claimed it meanwhile.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SqliteDatabase } from '../../../core/store/database.js';
import { AuditChain } from '../../../core/roles/programs/audit/chain.js';
import { applyMigrations } from '../../../core/store/migrations.js';
import { DEPLOYMENT_MACHINE_VERSION } from '../../../plugins/deployments/machine.js';
import { claimDeployments, leaseOf } from '../../../plugins/deployments/lease.js';
import { LEASE_MIGRATIONS, TRACE_MIGRATIONS } from '../../../plugins/deployments/schema.js';
import { DeploymentRepository, MIGRATIONS } from '../../../plugins/deployments/store.js';
import { TRIAL_MIGRATIONS } from '../../../plugins/deployments/trial-store.js';
import { batchOf, planned } from './store-cases.js';

const LEASE_MS = 10_000;

describe('a hold on a deployment', () => {
  let db: SqliteDatabase;
  beforeEach(async () => {
    // Only the clocks: the database's callbacks and the write rounds run as usual.
    vi.useFakeTimers({ toFake: ['performance', 'Date'], now: Date.UTC(2026, 10, 28, 8) });
    db = await SqliteDatabase.open(':memory:');
    await applyMigrations(db, 'deployments', [...MIGRATIONS, ...TRIAL_MIGRATIONS, ...LEASE_MIGRATIONS, ...TRACE_MIGRATIONS]);
  });
  afterEach(async () => {
    await db.close();
    vi.useRealTimers();
  });

  it('is trusted for half the lease after the database confirmed it; past that the database is asked, which renews it, or says another instance claimed it', async () => {
    const repo = new DeploymentRepository(db, await AuditChain.open(db, { timeZone: 'UTC' }), leaseOf({ holder: 'holder-a', ms: LEASE_MS }));
    const [row] = await db.write((tx) => repo.insertBatch(tx, batchOf('bat_h', null, Date.now()), planned(1, Buffer.from('x')), DEPLOYMENT_MACHINE_VERSION), { transaction: true });
    const id = row!.id;
    repo.held.hold(id, 1, performance.now());
    const leaseUntil = async () => Number((await db.get<{ lease_until: number }>('SELECT lease_until FROM deploy_deployments WHERE id = ?', [id]))?.lease_until);
    const stored = await leaseUntil();
    const writes = vi.spyOn(db, 'write');

    vi.advanceTimersByTime(0.4 * LEASE_MS);
    expect(await repo.held.stillHeld(id, 1)).toBe(true);
    expect(writes).not.toHaveBeenCalled();
    // Another epoch is not this hold's, whatever the clock.
    expect(await repo.held.stillHeld(id, 2)).toBe(false);

    vi.advanceTimersByTime(0.2 * LEASE_MS);
    expect(await repo.held.stillHeld(id, 1)).toBe(true);
    expect(writes).toHaveBeenCalledTimes(1);
    expect(await leaseUntil()).toBe(stored + 0.6 * LEASE_MS);
    // Confirmed just now: trusted again without asking.
    expect(await repo.held.stillHeld(id, 1)).toBe(true);
    expect(writes).toHaveBeenCalledTimes(1);

    // A stall longer than the lease: another instance claims the deployment meanwhile, under epoch 2.
    vi.advanceTimersByTime(1.1 * LEASE_MS);
    expect((await claimDeployments(db, leaseOf({ holder: 'holder-b', ms: LEASE_MS }), Date.now())).map((r) => [r.id, r.leaseEpoch])).toEqual([[id, 2]]);
    expect(await repo.held.stillHeld(id, 1)).toBe(false);
  });
});
