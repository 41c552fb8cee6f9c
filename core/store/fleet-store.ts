/**
 * Machines and groups, persisted in SQLite and mirrored in memory. The
 * config file's fleet seeds an empty database; afterwards the database is
 * the truth and the HTTP API edits it.
 */
import { groupConfigSchema, machineConfigSchema, type GroupConfig, type MachineConfig } from '../../config/schema.js';
import { GatewayError } from '../errors.js';
import type { Database } from './database.js';

export class FleetStore {
  private readonly machines = new Map<string, MachineConfig>();
  private readonly groups = new Map<string, GroupConfig>();
  private machineRevision = 0;

  private constructor(private readonly db: Database) {}

  /** Loads the stored fleet; seeds it from the config when the database holds no machines and no groups. */
  static async open(db: Database, seed: { machines: MachineConfig[]; groups: GroupConfig[] }): Promise<FleetStore> {
    const store = new FleetStore(db);
    const machineRows = await db.all<{ config: string }>('SELECT config FROM machines ORDER BY machine_id');
    const groupRows = await db.all<{ config: string }>('SELECT config FROM groups ORDER BY group_id');
    if (machineRows.length === 0 && groupRows.length === 0 && (seed.machines.length || seed.groups.length)) {
      const now = Date.now();
      await db.write(
        async (tx) => {
          for (const m of seed.machines) {
            await tx.run('INSERT INTO machines (machine_id, config, created_at, updated_at) VALUES (?, ?, ?, ?)', [m.machineID, JSON.stringify(m), now, now]);
          }
          for (const g of seed.groups) {
            await tx.run('INSERT INTO groups (group_id, config, created_at, updated_at) VALUES (?, ?, ?, ?)', [g.groupID, JSON.stringify(g), now, now]);
          }
        },
        { transaction: true },
      );
      for (const m of seed.machines) store.machines.set(m.machineID, m);
      for (const g of seed.groups) store.groups.set(g.groupID, g);
      return store;
    }
    // Stored rows are parsed again so that defaults added by later versions apply.
    for (const row of machineRows) {
      const m = machineConfigSchema.parse(JSON.parse(row.config));
      store.machines.set(m.machineID, m);
    }
    for (const row of groupRows) {
      const g = groupConfigSchema.parse(JSON.parse(row.config));
      store.groups.set(g.groupID, g);
    }
    return store;
  }

  /** Raised by every machine change, so derived views (e.g. the public list) can be cached. */
  get machinesRevision(): number {
    return this.machineRevision;
  }

  listMachines(): MachineConfig[] {
    return [...this.machines.values()];
  }

  getMachine(machineID: string): MachineConfig {
    const m = this.machines.get(machineID);
    if (!m) throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineID '${machineID}' does not exist`);
    return m;
  }

  hasMachine(machineID: string): boolean {
    return this.machines.has(machineID);
  }

  async createMachine(config: MachineConfig): Promise<MachineConfig> {
    if (this.machines.has(config.machineID)) {
      throw new GatewayError('GENERAL_MACHINE_ID_EXISTED', `machineID '${config.machineID}' already exists`);
    }
    const now = Date.now();
    await this.db.write((tx) =>
      tx.run('INSERT INTO machines (machine_id, config, created_at, updated_at) VALUES (?, ?, ?, ?)', [config.machineID, JSON.stringify(config), now, now]),
    );
    this.machines.set(config.machineID, config);
    this.machineRevision++;
    return config;
  }

  async updateMachine(config: MachineConfig): Promise<MachineConfig> {
    this.getMachine(config.machineID);
    await this.db.write((tx) =>
      tx.run('UPDATE machines SET config = ?, updated_at = ? WHERE machine_id = ?', [JSON.stringify(config), Date.now(), config.machineID]),
    );
    this.machines.set(config.machineID, config);
    this.machineRevision++;
    return config;
  }

  /** Deletes a machine and removes it from every group, in one transaction. */
  async deleteMachine(machineID: string): Promise<GroupConfig[]> {
    this.getMachine(machineID);
    const touched = this.listGroups()
      .filter((g) => g.machineIDs.includes(machineID))
      .map((g) => ({ ...g, machineIDs: g.machineIDs.filter((id) => id !== machineID) }));
    await this.db.write(
      async (tx) => {
        await tx.run('DELETE FROM machines WHERE machine_id = ?', [machineID]);
        for (const g of touched) {
          await tx.run('UPDATE groups SET config = ?, updated_at = ? WHERE group_id = ?', [JSON.stringify(g), Date.now(), g.groupID]);
        }
      },
      { transaction: true },
    );
    this.machines.delete(machineID);
    this.machineRevision++;
    for (const g of touched) this.groups.set(g.groupID, g);
    return touched;
  }

  listGroups(): GroupConfig[] {
    return [...this.groups.values()];
  }

  getGroup(groupID: string): GroupConfig {
    const g = this.groups.get(groupID);
    if (!g) throw new GatewayError('GENERAL_GROUP_ID_NOT_EXISTED', `groupID '${groupID}' does not exist`);
    return g;
  }

  private checkMembers(group: GroupConfig): void {
    const unknown = group.machineIDs.filter((id) => !this.machines.has(id));
    if (unknown.length) {
      throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineIDs: unknown ${unknown.map((id) => `'${id}'`).join(', ')}`);
    }
  }

  async createGroup(group: GroupConfig): Promise<GroupConfig> {
    if (this.groups.has(group.groupID)) throw new GatewayError('GENERAL_GROUP_ID_EXISTED', `groupID '${group.groupID}' already exists`);
    this.checkMembers(group);
    const now = Date.now();
    await this.db.write((tx) =>
      tx.run('INSERT INTO groups (group_id, config, created_at, updated_at) VALUES (?, ?, ?, ?)', [group.groupID, JSON.stringify(group), now, now]),
    );
    this.groups.set(group.groupID, group);
    return group;
  }

  async updateGroup(group: GroupConfig): Promise<GroupConfig> {
    this.getGroup(group.groupID);
    this.checkMembers(group);
    await this.db.write((tx) =>
      tx.run('UPDATE groups SET config = ?, updated_at = ? WHERE group_id = ?', [JSON.stringify(group), Date.now(), group.groupID]),
    );
    this.groups.set(group.groupID, group);
    return group;
  }

  async deleteGroup(groupID: string): Promise<void> {
    this.getGroup(groupID);
    await this.db.write((tx) => tx.run('DELETE FROM groups WHERE group_id = ?', [groupID]));
    this.groups.delete(groupID);
  }
}
