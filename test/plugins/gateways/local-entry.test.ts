/**
 * The rule that finds or makes the fleet entry of the gateway in an
 * instance's process (plugins/gateways/local-entry.ts), on a real database:
 * each gateway its own entry by its gatewayID, an entry from before
 * gateways were told apart taken over where that is safe, and the starts
 * that cannot be safe refused with what to do.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readPart } from '../../../core/config/config-parts.js';
import { parseConfig } from '../../../core/roles/index.js';
import { AuditChain } from '../../../core/roles/programs/audit/chain.js';
import { applyMigrations } from '../../../core/store/migrations.js';
import type { SqlDatabase } from '../../../core/store/sql-database.js';
import { GATEWAYS_PART } from '../../../plugins/gateways/config.js';
import { LocalGatewayRefused, registerLocalGateway, SERVING_LEASE_MS, type LocalEntryFacts } from '../../../plugins/gateways/local-entry.js';
import { FleetRepository, MIGRATIONS } from '../../../plugins/gateways/store.js';
import { sqliteEngine } from '../../fixtures/database-engines.js';

const C = '6f0c1d2e-0000-4000-8000-00000000000c';
const D = '7a1b2c3d-0000-4000-8000-00000000000d';
const T0 = Date.UTC(2026, 10, 24, 9);

const engine = sqliteEngine();
afterAll(() => engine.remove());

/** The facts of an instance whose gateway is `gatewayID`, at `place`, on a database several instances share unless told. */
const facts = (gatewayID: string, place: string, extra: Partial<LocalEntryFacts> = {}): LocalEntryFacts => ({
  identity: { gatewayID, name: 'gateway' }, host: place.split(':')[0] as string, servedBy: place, shared: true, adopt: undefined,
  idFile: `/var/lib/${place.split(':')[0] as string}/gateway-id`, now: T0, ...extra,
});

describe('the fleet entry of the gateway in an instance', () => {
  let db: SqlDatabase;
  let repo: FleetRepository;
  let ctx: { db: SqlDatabase; audit: AuditChain };

  beforeEach(async () => {
    db = await (await engine.fresh()).open();
    await applyMigrations(db, 'gateways', MIGRATIONS);
    ctx = { db, audit: await AuditChain.open(db, { timeZone: 'UTC' }) };
    repo = new FleetRepository(db);
  });
  afterEach(() => db.close());

  /** An in-process entry as the version before left it: no gatewayID (migration 2 gives it none), one machine on it. */
  const earlierEntry = async () => {
    await db.write(async (tx) => {
      await tx.run("INSERT INTO fleet_gateways (id, name, name_key, kind, url, sealed_key, created_by, created_at) VALUES ('gw_00000000000000e1', 'local', 'local', 'in-process', 'in-process', NULL, 'system', ?)", [T0 - 1000]);
      await tx.run("INSERT INTO fleet_machines (id, gateway_id, machine_id, name, driver, system, model, machine_type, active_on_gateway, present, program_dir, transform_profile, mirror_enabled, mirror_interval_sec, created_at, updated_at) VALUES ('mch_00000000000000e1', 'gw_00000000000000e1', 'L01', 'Lathe', 'simulator', 'FANUC', '0i', 'lathe', 1, 1, '', NULL, 0, 300, ?, ?)", [T0, T0]);
    }, { transaction: true });
    return 'gw_00000000000000e1';
  };
  const refusal = (f: LocalEntryFacts) => registerLocalGateway(ctx, repo, f).then(() => undefined, (err: unknown) => err as Error);

  it('PV-33 each in-process gateway is its own entry keyed by its gatewayID: a second gateway gets its own, a restart finds its own', async () => {
    const c = await registerLocalGateway(ctx, repo, facts(C, 'host-c:/var/lib/cnc'));
    const d = await registerLocalGateway(ctx, repo, facts(D, 'host-d:/var/lib/cnc'));
    expect(c).toMatchObject({ decision: 'new', entry: { name: 'local', kind: 'in-process', gatewayUid: C, host: 'host-c' } });
    expect(d).toMatchObject({ decision: 'new', entry: { name: `local-${D.slice(0, 8)}`, kind: 'in-process', gatewayUid: D, host: 'host-d' } });
    expect(d.entry.id).not.toBe(c.entry.id);
    // C restarted at once (killed, its hold not yet ended): the same place, so the same gateway.
    const again = await registerLocalGateway(ctx, repo, facts(C, 'host-c:/var/lib/cnc', { now: T0 + 1000 }));
    expect(again).toMatchObject({ decision: 'own', entry: { id: c.entry.id, gatewayUid: C } });
    expect((await repo.listGateways(10, null)).map((g) => [g.name, g.gatewayUid])).toEqual(expect.arrayContaining([['local', C], [`local-${D.slice(0, 8)}`, D]]));
    const audited = await db.all<{ action: string; entity_id: string }>("SELECT action, entity_id FROM audit_log WHERE category = 'fleet' ORDER BY seq");
    expect(audited).toEqual([{ action: 'gateway.register', entity_id: c.entry.id }, { action: 'gateway.register', entity_id: d.entry.id }]);
  });

  it('PV-33 on SQLite (one process per database) the entry from before gateways were told apart becomes this gateway\'s: same id, its machines stay on it', async () => {
    const id = await earlierEntry();
    const taken = await registerLocalGateway(ctx, repo, facts(C, 'host-c:/var/lib/cnc', { shared: false }));
    expect(taken).toMatchObject({ decision: 'adopt', entry: { id, name: 'local', gatewayUid: C } });
    expect((await repo.machinesOf(id)).map((m) => m.machineId)).toEqual(['L01']);
    expect(await db.get("SELECT action FROM audit_log WHERE category = 'fleet' AND entity_id = ?", [id])).toEqual({ action: 'gateway.adopt' });
  });

  it('on SQLite a database whose gateway is another\'s refuses the start, naming gateway-id and the setting; with the setting the entry is this gateway\'s', async () => {
    const c = await registerLocalGateway(ctx, repo, facts(C, 'host-c:/var/lib/cnc', { shared: false }));
    const refused = await refusal(facts(D, 'host-c:/var/lib/cnc', { shared: false, now: T0 + 60_000 }));
    expect(refused).toBeInstanceOf(LocalGatewayRefused);
    expect(refused?.message).toContain(`programs.db holds the gateway of entry 'local' (${c.entry.id}), gatewayID ${C}, but the gateway of this data directory is ${D} (/var/lib/host-c/gateway-id)`);
    expect(refused?.message).toContain(`programs.adoptGateway (PROGRAMS_ADOPT_GATEWAY)=${c.entry.id}`);
    expect((await repo.gateway(c.entry.id))?.gatewayUid).toBe(C);
    const adopted = await registerLocalGateway(ctx, repo, facts(D, 'host-c:/var/lib/cnc', { shared: false, adopt: c.entry.id, now: T0 + 60_000 }));
    expect(adopted).toMatchObject({ decision: 'adopt', entry: { id: c.entry.id, gatewayUid: D } });
  });

  it('on a shared database the entry from before refuses every gateway\'s start until one is told it is its own (programs.adoptGateway); then the others get their own', async () => {
    const id = await earlierEntry();
    for (const [uid, place] of [[C, 'host-c:/var/lib/cnc'], [D, 'host-d:/var/lib/cnc']] as const) {
      const refused = await refusal(facts(uid, place));
      expect(refused).toBeInstanceOf(LocalGatewayRefused);
      expect(refused?.message).toContain(`the database holds the in-process gateway entry 'local' (${id}), registered before each instance's gateway had an entry of its own`);
      expect(refused?.message).toContain(`start this instance once with programs.adoptGateway (PROGRAMS_ADOPT_GATEWAY)=${id}`);
    }
    expect((await repo.gateway(id))?.gatewayUid).toBeNull();
    const c = await registerLocalGateway(ctx, repo, facts(C, 'host-c:/var/lib/cnc', { adopt: id }));
    expect(c).toMatchObject({ decision: 'adopt', entry: { id, gatewayUid: C } });
    expect((await repo.machinesOf(id)).map((m) => m.gatewayId)).toEqual([id]);
    const d = await registerLocalGateway(ctx, repo, facts(D, 'host-d:/var/lib/cnc'));
    expect(d).toMatchObject({ decision: 'new', entry: { name: `local-${D.slice(0, 8)}`, gatewayUid: D } });
    // The setting left in place is harmless once the entry is this gateway's.
    expect(await registerLocalGateway(ctx, repo, facts(C, 'host-c:/var/lib/cnc', { adopt: id, now: T0 + 1000 }))).toMatchObject({ decision: 'own', entry: { id } });
  });

  it('a gatewayID an instance elsewhere runs now (a copied gateway-id) refuses the start naming the file; once that instance\'s hold ends, the start goes on', async () => {
    const c = await registerLocalGateway(ctx, repo, facts(C, 'host-c:/var/lib/cnc'));
    const refused = await refusal(facts(C, 'host-d:/var/lib/cnc', { now: T0 + 5000 }));
    expect(refused).toBeInstanceOf(LocalGatewayRefused);
    expect(refused?.message).toContain(`this gateway's ID ${C} (/var/lib/host-d/gateway-id) is the gateway of entry 'local' (${c.entry.id}), which the instance at host-c:/var/lib/cnc runs now: two gateways have one ID`);
    expect(refused?.message).toContain('Delete /var/lib/host-d/gateway-id here');
    // C stopped (or died and its hold ran out): the gateway moved to host D with its data directory.
    const moved = await registerLocalGateway(ctx, repo, facts(C, 'host-d:/var/lib/cnc', { now: T0 + SERVING_LEASE_MS + 1 }));
    expect(moved).toMatchObject({ decision: 'own', entry: { id: c.entry.id, host: 'host-d' } });
    // A clean stop releases the hold at once.
    await repo.releaseServing(c.entry.id, 'host-d:/var/lib/cnc');
    expect(await registerLocalGateway(ctx, repo, facts(C, 'host-c:/var/lib/cnc', { now: T0 + SERVING_LEASE_MS + 2 }))).toMatchObject({ decision: 'own', entry: { id: c.entry.id, host: 'host-c' } });
  });

  it('on SQLite a copy of a running instance\'s database (a backup restored elsewhere) is this gateway\'s: the hold in the copy is the copied one\'s', async () => {
    const c = await registerLocalGateway(ctx, repo, facts(C, 'host-c:/var/lib/cnc', { shared: false }));
    const restored = await registerLocalGateway(ctx, repo, facts(C, 'host-c:/srv/restored', { shared: false, now: T0 + 1000 }));
    expect(restored).toMatchObject({ decision: 'own', entry: { id: c.entry.id, servedBy: 'host-c:/srv/restored' } });
  });

  it('programs.adoptGateway naming no gateway, a remote one, or one that another running instance holds refuses the start naming the setting', async () => {
    const unknown = await refusal(facts(C, 'host-c:/x', { adopt: 'gw_0123456789abcdef' }));
    expect(unknown?.message).toContain('programs.adoptGateway (PROGRAMS_ADOPT_GATEWAY) names gw_0123456789abcdef, which is no gateway of this database');
    await db.write((tx) => tx.run("INSERT INTO fleet_gateways (id, name, name_key, kind, url, sealed_key, created_by, created_at) VALUES ('gw_00000000000000a1', 'plant', 'plant', 'http', 'http://10.0.4.7:8080', NULL, 'admin', ?)", [T0]));
    const remote = await refusal(facts(C, 'host-c:/x', { adopt: 'gw_00000000000000a1' }));
    expect(remote?.message).toContain("names 'plant' (gw_00000000000000a1), a remote gateway reached over HTTP");
    const d = await registerLocalGateway(ctx, repo, facts(D, 'host-d:/x'));
    const held = await refusal(facts(C, 'host-c:/x', { adopt: d.entry.id, now: T0 + 1000 }));
    expect(held?.message).toContain(`names 'local' (${d.entry.id}), which the instance at host-d:/x runs now`);
    const c = await registerLocalGateway(ctx, repo, facts(C, 'host-c:/x'));
    const second = await refusal(facts(C, 'host-c:/x', { adopt: d.entry.id, now: T0 + SERVING_LEASE_MS + 1 }));
    expect(second?.message).toContain(`but this gateway (${C}) has its own entry '${c.entry.name}' (${c.entry.id})`);
    expect((await repo.gateway(d.entry.id))?.gatewayUid).toBe(D);
  });
});

describe('programs.adoptGateway', () => {
  it('is read from the file or PROGRAMS_ADOPT_GATEWAY, and anything but a gateway id stops the start naming the key', () => {
    expect(readPart(parseConfig({}, 'f', {}), GATEWAYS_PART).adoptGateway).toBeUndefined();
    expect(readPart(parseConfig({ programs: { adoptGateway: 'gw_00000000000000e1' } }, 'f', {}), GATEWAYS_PART).adoptGateway).toBe('gw_00000000000000e1');
    expect(readPart(parseConfig({}, 'f', { PROGRAMS_ADOPT_GATEWAY: 'gw_0123456789abcdef' }), GATEWAYS_PART).adoptGateway).toBe('gw_0123456789abcdef');
    expect(() => parseConfig({}, 'f', { PROGRAMS_ADOPT_GATEWAY: 'local' })).toThrow('programs.adoptGateway: found "local"; an id such as gw_0123456789abcdef');
  });
});
