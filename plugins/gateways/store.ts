/**
 * The program service's fleet: the gateways it reaches (a remote gateway's
 * secret key sealed with AES-256-GCM, never returned), the machines and
 * groups it read from them, and its own settings per machine. Portable SQL.
 */
import { numOrNull, strOrNull } from '../../core/store/row-values.js';
import type { Migration } from '../../core/store/migrations.js';
import type { SqlDatabase, WriteTx } from '../../core/store/database.js';

export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'gateways, machines, machine groups',
    up: [
      `CREATE TABLE fleet_gateways (
         id TEXT PRIMARY KEY,
         name TEXT NOT NULL,
         name_key TEXT NOT NULL UNIQUE,
         kind TEXT NOT NULL,
         url TEXT NOT NULL,
         sealed_key TEXT,
         created_by TEXT NOT NULL,
         created_at BIGINT NOT NULL,
         last_contact_at BIGINT,
         last_error TEXT,
         last_error_at BIGINT,
         last_sync_at BIGINT
       )`,
      `CREATE TABLE fleet_machines (
         id TEXT PRIMARY KEY,
         gateway_id TEXT NOT NULL REFERENCES fleet_gateways(id),
         machine_id TEXT NOT NULL,
         name TEXT NOT NULL,
         driver TEXT NOT NULL,
         system TEXT NOT NULL,
         model TEXT NOT NULL,
         machine_type TEXT NOT NULL,
         active_on_gateway INTEGER NOT NULL,
         present INTEGER NOT NULL,
         program_dir TEXT NOT NULL,
         transform_profile TEXT,
         mirror_enabled INTEGER NOT NULL,
         mirror_interval_sec INTEGER NOT NULL,
         created_at BIGINT NOT NULL,
         updated_at BIGINT NOT NULL,
         UNIQUE (gateway_id, machine_id)
       )`,
      `CREATE TABLE fleet_groups (
         id TEXT PRIMARY KEY,
         name TEXT NOT NULL,
         gateway_id TEXT,
         gateway_group_id TEXT,
         description TEXT NOT NULL,
         created_at BIGINT NOT NULL,
         updated_at BIGINT NOT NULL
       )`,
      `CREATE TABLE fleet_group_members (
         group_id TEXT NOT NULL REFERENCES fleet_groups(id),
         machine_id TEXT NOT NULL REFERENCES fleet_machines(id),
         PRIMARY KEY (group_id, machine_id)
       )`,
    ],
  },
  {
    id: 2,
    name: 'each in-process gateway its own entry, by the gateway\'s own identity',
    up: [
      // The gateway's gatewayID (its data directory's gateway-id); null for remote gateways and for an in-process one registered before.
      'ALTER TABLE fleet_gateways ADD COLUMN gateway_uid TEXT',
      // Where an in-process gateway runs now: the host, and the instance's host and data directory with how long that holds unless renewed.
      'ALTER TABLE fleet_gateways ADD COLUMN host TEXT',
      'ALTER TABLE fleet_gateways ADD COLUMN served_by TEXT',
      'ALTER TABLE fleet_gateways ADD COLUMN served_until BIGINT',
      'CREATE UNIQUE INDEX fleet_gateways_uid ON fleet_gateways (gateway_uid)',
    ],
  },
];

export interface GatewayRecord {
  id: string;
  name: string;
  /** `in-process`: the gateway in the process of a program-service instance (reached in-process there, over HTTP at `url` from the others); `http`: a remote gateway. */
  kind: 'in-process' | 'http';
  /** A remote gateway's base URL; for an in-process gateway `in-process`, or the address the other instances reach it at once one is registered. */
  url: string;
  sealedKey: string | null;
  /** The gateway's own gatewayID, for an in-process gateway; null for a remote one and for one registered before gateways were told apart. */
  gatewayUid: string | null;
  /** The host of the instance whose process runs this in-process gateway. */
  host: string | null;
  /** That instance's host and data directory, while it runs (`servedUntil` not past). */
  servedBy: string | null;
  servedUntil: number | null;
  createdBy: string;
  createdAt: number;
  lastContactAt: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
  lastSyncAt: number | null;
}

export interface MachineRecord {
  id: string;
  gatewayId: string;
  machineId: string;
  name: string;
  driver: string;
  system: string;
  model: string;
  machineType: string;
  activeOnGateway: boolean;
  /** False once a sync no longer found it on its gateway: kept, because deployments and the audit refer to it. */
  present: boolean;
  programDir: string;
  transformProfile: string | null;
  mirrorEnabled: boolean;
  mirrorIntervalSec: number;
  createdAt: number;
  updatedAt: number;
}

export interface GroupRecord {
  id: string;
  name: string;
  /** Set for a group read from a gateway; null for a group made in this service. */
  gatewayId: string | null;
  gatewayGroupId: string | null;
  description: string;
  machineIds: string[];
  createdAt: number;
  updatedAt: number;
}

type Row = Record<string, unknown>;

const gatewayOf = (r: Row): GatewayRecord => ({
  id: String(r.id), name: String(r.name), kind: r.kind as GatewayRecord['kind'], url: String(r.url), sealedKey: strOrNull(r.sealed_key), createdBy: String(r.created_by),
  createdAt: Number(r.created_at), lastContactAt: numOrNull(r.last_contact_at), lastError: strOrNull(r.last_error), lastErrorAt: numOrNull(r.last_error_at), lastSyncAt: numOrNull(r.last_sync_at),
  gatewayUid: strOrNull(r.gateway_uid), host: strOrNull(r.host), servedBy: strOrNull(r.served_by), servedUntil: numOrNull(r.served_until),
});

const machineOf = (r: Row): MachineRecord => ({
  id: String(r.id), gatewayId: String(r.gateway_id), machineId: String(r.machine_id), name: String(r.name), driver: String(r.driver), system: String(r.system),
  model: String(r.model), machineType: String(r.machine_type), activeOnGateway: Number(r.active_on_gateway) === 1, present: Number(r.present) === 1,
  programDir: String(r.program_dir), transformProfile: strOrNull(r.transform_profile), mirrorEnabled: Number(r.mirror_enabled) === 1,
  mirrorIntervalSec: Number(r.mirror_interval_sec), createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
});

export class FleetRepository {
  constructor(private readonly db: SqlDatabase) {}

  async gateway(id: string): Promise<GatewayRecord | undefined> {
    const r = await this.db.get('SELECT * FROM fleet_gateways WHERE id = ?', [id]);
    return r ? gatewayOf(r) : undefined;
  }

  /** The gateway, read inside a write transaction. */
  async gatewayIn(tx: WriteTx, id: string): Promise<GatewayRecord | undefined> {
    const r = await tx.get('SELECT * FROM fleet_gateways WHERE id = ?', [id]);
    return r ? gatewayOf(r) : undefined;
  }

  async gatewayByName(name: string): Promise<GatewayRecord | undefined> {
    const r = await this.db.get('SELECT * FROM fleet_gateways WHERE name_key = ?', [name.toLowerCase()]);
    return r ? gatewayOf(r) : undefined;
  }

  /** The in-process gateways, in order of registration (the local entry's rule reads them all: there are few). */
  async inProcessGateways(tx: WriteTx): Promise<GatewayRecord[]> {
    return (await tx.all("SELECT * FROM fleet_gateways WHERE kind = 'in-process' ORDER BY created_at, id")).map(gatewayOf);
  }

  async listGateways(limit: number, afterId: string | null): Promise<GatewayRecord[]> {
    return (await this.db.all('SELECT * FROM fleet_gateways WHERE id > ? ORDER BY id LIMIT ?', [afterId ?? '', limit])).map(gatewayOf);
  }

  async insertGateway(tx: WriteTx, g: GatewayRecord): Promise<void> {
    await tx.run(
      `INSERT INTO fleet_gateways (id, name, name_key, kind, url, sealed_key, created_by, created_at, last_contact_at, last_error, last_error_at, last_sync_at, gateway_uid, host, served_by, served_until)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL, NULL, NULL, ?, ?, ?, ?)`,
      [g.id, g.name, g.name.toLowerCase(), g.kind, g.url, g.sealedKey, g.createdBy, g.createdAt, g.gatewayUid, g.host, g.servedBy, g.servedUntil],
    );
  }

  /** Changes what a person may change of a gateway: its name, its URL, its sealed key. */
  async updateGateway(tx: WriteTx, g: Pick<GatewayRecord, 'id' | 'name' | 'url' | 'sealedKey'>): Promise<void> {
    await tx.run('UPDATE fleet_gateways SET name = ?, name_key = ?, url = ?, sealed_key = ? WHERE id = ?', [g.name, g.name.toLowerCase(), g.url, g.sealedKey, g.id]);
  }

  /** Marks an in-process gateway as this gateway's (`uid`), run by the instance at `servedBy` until `until`. */
  async serve(tx: WriteTx, id: string, at: { uid: string; host: string; servedBy: string; until: number }): Promise<void> {
    await tx.run('UPDATE fleet_gateways SET gateway_uid = ?, host = ?, served_by = ?, served_until = ? WHERE id = ?', [at.uid, at.host, at.servedBy, at.until, id]);
  }

  /** Extends the instance's hold on its gateway's entry; answers whether it still held it. */
  async renewServing(id: string, servedBy: string, until: number): Promise<boolean> {
    const { changes } = await this.db.write((tx) => tx.run('UPDATE fleet_gateways SET served_until = ? WHERE id = ? AND served_by = ?', [until, id, servedBy]));
    return changes > 0;
  }

  /** Ends the instance's hold at once (a clean stop). */
  async releaseServing(id: string, servedBy: string): Promise<void> {
    await this.db.write((tx) => tx.run('UPDATE fleet_gateways SET served_until = NULL WHERE id = ? AND served_by = ?', [id, servedBy]));
  }

  /** Records the outcome of a call to a gateway: contact (error null) or the error. */
  recordContact(id: string, at: number, error: string | null): Promise<unknown> {
    return this.db.write((tx) =>
      error === null
        ? tx.run('UPDATE fleet_gateways SET last_contact_at = ?, last_error = NULL, last_error_at = NULL WHERE id = ?', [at, id])
        : tx.run('UPDATE fleet_gateways SET last_error = ?, last_error_at = ? WHERE id = ?', [error.slice(0, 500), at, id]),
    );
  }

  /** Machines still listed by their gateway whose mirror is on. */
  async mirrored(): Promise<MachineRecord[]> {
    return (await this.db.all('SELECT * FROM fleet_machines WHERE mirror_enabled = 1 AND present = 1 ORDER BY id')).map(machineOf);
  }

  async gatewayCounts(): Promise<{ total: number; unreachable: number }> {
    const r = await this.db.get<{ total: number; unreachable: number }>('SELECT COUNT(*) AS total, COALESCE(SUM(CASE WHEN last_error IS NOT NULL THEN 1 ELSE 0 END), 0) AS unreachable FROM fleet_gateways');
    return { total: Number(r?.total ?? 0), unreachable: Number(r?.unreachable ?? 0) };
  }

  async setSynced(tx: WriteTx, id: string, at: number): Promise<void> {
    await tx.run('UPDATE fleet_gateways SET last_sync_at = ?, last_contact_at = ?, last_error = NULL, last_error_at = NULL WHERE id = ?', [at, at, id]);
  }

  async machine(id: string): Promise<MachineRecord | undefined> {
    const r = await this.db.get('SELECT * FROM fleet_machines WHERE id = ?', [id]);
    return r ? machineOf(r) : undefined;
  }

  async machinesIn(ids: readonly string[]): Promise<MachineRecord[]> {
    const out: MachineRecord[] = [];
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      out.push(...(await this.db.all(`SELECT * FROM fleet_machines WHERE id IN (${chunk.map(() => '?').join(', ')})`, [...chunk])).map(machineOf));
    }
    return out;
  }

  async machinesOf(gatewayId: string): Promise<MachineRecord[]> {
    return (await this.db.all('SELECT * FROM fleet_machines WHERE gateway_id = ? ORDER BY machine_id', [gatewayId])).map(machineOf);
  }

  async listMachines(gatewayId: string | undefined, limit: number, afterId: string | null): Promise<MachineRecord[]> {
    const rows = await this.db.all(`SELECT * FROM fleet_machines WHERE id > ?${gatewayId ? ' AND gateway_id = ?' : ''} ORDER BY id LIMIT ?`, [
      afterId ?? '', ...(gatewayId ? [gatewayId] : []), limit,
    ]);
    return rows.map(machineOf);
  }

  async upsertMachine(tx: WriteTx, m: MachineRecord, isNew: boolean): Promise<void> {
    if (isNew) {
      await tx.run(
        `INSERT INTO fleet_machines (id, gateway_id, machine_id, name, driver, system, model, machine_type, active_on_gateway, present, program_dir, transform_profile, mirror_enabled, mirror_interval_sec, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [m.id, m.gatewayId, m.machineId, m.name, m.driver, m.system, m.model, m.machineType, m.activeOnGateway ? 1 : 0, m.present ? 1 : 0, m.programDir, m.transformProfile, m.mirrorEnabled ? 1 : 0, m.mirrorIntervalSec, m.createdAt, m.updatedAt],
      );
    } else {
      await tx.run(
        `UPDATE fleet_machines SET name = ?, driver = ?, system = ?, model = ?, machine_type = ?, active_on_gateway = ?, present = ?, program_dir = ?, transform_profile = ?, mirror_enabled = ?, mirror_interval_sec = ?, updated_at = ? WHERE id = ?`,
        [m.name, m.driver, m.system, m.model, m.machineType, m.activeOnGateway ? 1 : 0, m.present ? 1 : 0, m.programDir, m.transformProfile, m.mirrorEnabled ? 1 : 0, m.mirrorIntervalSec, m.updatedAt, m.id],
      );
    }
  }

  async group(id: string): Promise<GroupRecord | undefined> {
    const r = await this.db.get('SELECT * FROM fleet_groups WHERE id = ?', [id]);
    return r ? this.withMembers(r) : undefined;
  }

  async groupsOf(gatewayId: string): Promise<GroupRecord[]> {
    const rows = await this.db.all('SELECT * FROM fleet_groups WHERE gateway_id = ? ORDER BY gateway_group_id', [gatewayId]);
    return Promise.all(rows.map((r) => this.withMembers(r)));
  }

  async listGroups(limit: number, afterId: string | null): Promise<GroupRecord[]> {
    const rows = await this.db.all('SELECT * FROM fleet_groups WHERE id > ? ORDER BY id LIMIT ?', [afterId ?? '', limit]);
    return Promise.all(rows.map((r) => this.withMembers(r)));
  }

  /** Ids of the groups `machineId` belongs to. */
  async groupIdsOf(machineId: string): Promise<string[]> {
    return (await this.db.all<{ group_id: string }>('SELECT group_id FROM fleet_group_members WHERE machine_id = ? ORDER BY group_id', [machineId])).map((r) => r.group_id);
  }

  private async withMembers(r: Row): Promise<GroupRecord> {
    const members = await this.db.all<{ machine_id: string }>('SELECT machine_id FROM fleet_group_members WHERE group_id = ? ORDER BY machine_id', [String(r.id)]);
    return {
      id: String(r.id), name: String(r.name), gatewayId: strOrNull(r.gateway_id), gatewayGroupId: strOrNull(r.gateway_group_id), description: String(r.description),
      machineIds: members.map((m) => m.machine_id), createdAt: Number(r.created_at), updatedAt: Number(r.updated_at),
    };
  }

  async saveGroup(tx: WriteTx, g: GroupRecord, isNew: boolean): Promise<void> {
    if (isNew) {
      await tx.run('INSERT INTO fleet_groups (id, name, gateway_id, gateway_group_id, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)', [
        g.id, g.name, g.gatewayId, g.gatewayGroupId, g.description, g.createdAt, g.updatedAt,
      ]);
    } else {
      await tx.run('UPDATE fleet_groups SET name = ?, description = ?, updated_at = ? WHERE id = ?', [g.name, g.description, g.updatedAt, g.id]);
    }
    await tx.run('DELETE FROM fleet_group_members WHERE group_id = ?', [g.id]);
    for (const machineId of g.machineIds) await tx.run('INSERT INTO fleet_group_members (group_id, machine_id) VALUES (?, ?)', [g.id, machineId]);
  }
}
