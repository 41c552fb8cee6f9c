/**
 * Machines and groups, persisted in SQLite and mirrored in memory. At open,
 * the config file's fleet is applied declaratively (see config-fleet.ts);
 * the HTTP API edits the store afterwards. Machine credentials are stored
 * encrypted (see credential-box.ts) and kept in plain text in memory only,
 * where the drivers need them.
 */
import { groupConfigSchema, machineConfigSchema, WRITE_ONLY_MACHINE_FIELDS, type GroupConfig, type MachineConfig } from '../machine-config.js';
import { GatewayError } from '../../../interfaces/errors.js';
import { planConfigFleet, type ConfigFleet, type ConfigFleetPlan } from './config-fleet.js';
import { CredentialDecryptError, isSealedCredential, type CredentialBox } from '../../../store/credential-box.js';
import type { Database, WriteTx } from '../../../store/database.js';

export interface FleetStoreOptions {
  /** Encrypts and decrypts the machines' credentials. */
  credentials: CredentialBox;
  /** The config file's machines and groups, applied at open. */
  config: ConfigFleet;
}

/** What opening the store did, for the log and the start-up banner. */
export interface FleetStoreOpening {
  configChanges: ConfigFleetPlan;
  /** Machines whose credentials an earlier version stored in plain text and that were encrypted now. */
  encrypted: string[];
}

export class FleetStore {
  private readonly machines = new Map<string, MachineConfig>();
  private readonly groups = new Map<string, GroupConfig>();
  private machineRevision = 0;
  private readonly configNamed: ReadonlySet<string>;
  private opening: FleetStoreOpening = { configChanges: planConfigFleet({ machines: new Map(), groups: new Map() }, { source: '', machines: [], groups: [] }), encrypted: [] };

  private constructor(
    private readonly db: Database,
    private readonly credentials: CredentialBox,
    config: ConfigFleet,
  ) {
    this.configNamed = new Set(config.machines.map((m) => m.machineID));
  }

  /**
   * Loads the stored fleet, decrypting credentials (a credential that does not
   * decrypt stops the start unless the config supplies it), encrypts credentials
   * an earlier version stored in plain text, then applies the config's fleet.
   */
  static async open(db: Database, options: FleetStoreOptions): Promise<FleetStore> {
    const { credentials, config } = options;
    const store = new FleetStore(db, credentials, config);
    const machineRows = await db.all<{ machine_id: string; config: string }>('SELECT machine_id, config FROM machines ORDER BY machine_id');
    const groupRows = await db.all<{ config: string }>('SELECT config FROM groups ORDER BY group_id');
    const unreadable = new Set<string>();
    const plaintext: MachineConfig[] = [];
    for (const row of machineRows) {
      const raw = JSON.parse(row.config) as Record<string, unknown>;
      let inPlainText = false;
      for (const field of WRITE_ONLY_MACHINE_FIELDS) {
        const value = raw[field];
        if (isSealedCredential(value)) {
          try {
            raw[field] = credentials.open(row.machine_id, field, value);
          } catch (err) {
            if (!(err instanceof CredentialDecryptError)) throw err;
            unreadable.add(`${row.machine_id}/${field}`);
            delete raw[field];
          }
        } else if (typeof value === 'string') inPlainText = true;
      }
      // Stored rows are parsed again so that defaults added by later versions apply.
      const m = machineConfigSchema.parse(raw);
      store.machines.set(m.machineID, m);
      if (inPlainText) plaintext.push(m);
    }
    for (const row of groupRows) {
      const g = groupConfigSchema.parse(JSON.parse(row.config));
      store.groups.set(g.groupID, g);
    }
    store.refuseUnreadable(unreadable, config);
    if (plaintext.length) await store.encryptPlaintextRows(plaintext);
    const configChanges = planConfigFleet({ machines: store.machines, groups: store.groups }, config, unreadable);
    await store.applyConfig(configChanges);
    store.opening = { configChanges, encrypted: plaintext.map((m) => m.machineID) };
    return store;
  }

  /** Fails closed: a stored credential that does not decrypt stops the start, unless the config gives its value. */
  private refuseUnreadable(unreadable: ReadonlySet<string>, config: ConfigFleet): void {
    const supplied = new Set(config.machines.flatMap((m) => WRITE_ONLY_MACHINE_FIELDS.filter((f) => m[f] !== undefined).map((f) => `${m.machineID}/${f}`)));
    const missing = [...unreadable].filter((key) => !supplied.has(key));
    if (!missing.length) return;
    const named = missing.map((key) => {
      const [machineID, field] = key.split('/') as [string, string];
      return `  - machine '${machineID}' ${field}`;
    });
    const keyHint = this.credentials.created
      ? `${this.credentials.file} did not exist (it was not kept: restore the one backed up with this data directory).`
      : `${this.credentials.file} is not the key that encrypted them, or the stored data was altered.`;
    if (this.credentials.created) this.credentials.discard();
    throw new Error(
      [
        `stored machine credentials do not decrypt (AES-256-GCM authentication failed):`,
        ...named,
        keyHint,
        `Restore the credentials.key that belongs to this data directory, or give these credentials in the config file's machine entries to replace the stored values.`,
      ].join('\n'),
    );
  }

  /** Encrypts credentials an earlier version stored in plain text, and scrubs the old row content from the file. */
  private async encryptPlaintextRows(machines: readonly MachineConfig[]): Promise<void> {
    await this.db.write(async (tx) => {
      // secure_delete zeroes the freed cells that held the plain text; the checkpoint
      // then copies the pages into the main file and empties the WAL.
      await tx.run('PRAGMA secure_delete=ON');
      try {
        await inTransaction(tx, async () => {
          for (const m of machines) await tx.run('UPDATE machines SET config = ? WHERE machine_id = ?', [this.machineRow(m), m.machineID]);
        });
      } finally {
        await tx.run('PRAGMA secure_delete=OFF');
      }
      await tx.run('PRAGMA wal_checkpoint(TRUNCATE)');
    });
  }

  private async applyConfig(changes: ConfigFleetPlan): Promise<void> {
    const { machines, groups } = changes;
    if (!machines.added.length && !machines.updated.length && !groups.added.length && !groups.updated.length) return;
    const now = Date.now();
    await this.db.write(
      async (tx) => {
        for (const m of machines.added) {
          await tx.run('INSERT INTO machines (machine_id, config, created_at, updated_at) VALUES (?, ?, ?, ?)', [m.machineID, this.machineRow(m), now, now]);
        }
        for (const { config: m } of machines.updated) {
          await tx.run('UPDATE machines SET config = ?, updated_at = ? WHERE machine_id = ?', [this.machineRow(m), now, m.machineID]);
        }
        for (const g of groups.added) {
          await tx.run('INSERT INTO groups (group_id, config, created_at, updated_at) VALUES (?, ?, ?, ?)', [g.groupID, JSON.stringify(g), now, now]);
        }
        for (const { config: g } of groups.updated) {
          await tx.run('UPDATE groups SET config = ?, updated_at = ? WHERE group_id = ?', [JSON.stringify(g), now, g.groupID]);
        }
      },
      { transaction: true },
    );
    for (const m of [...machines.added, ...machines.updated.map((u) => u.config)]) this.machines.set(m.machineID, m);
    for (const g of [...groups.added, ...groups.updated.map((u) => u.config)]) this.groups.set(g.groupID, g);
  }

  /** The JSON stored for a machine: its config with each credential encrypted. */
  private machineRow(config: MachineConfig): string {
    const row: Record<string, unknown> = { ...config };
    for (const field of WRITE_ONLY_MACHINE_FIELDS) {
      const value = config[field];
      if (value !== undefined) row[field] = this.credentials.seal(config.machineID, field, value);
    }
    return JSON.stringify(row);
  }

  /** What the last open applied from the config and which plain-text credentials it encrypted. */
  get opened(): FleetStoreOpening {
    return this.opening;
  }

  /** True when the config file names this machine, so the next start replaces API edits of it. */
  isConfigManaged(machineID: string): boolean {
    return this.configNamed.has(machineID);
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
      tx.run('INSERT INTO machines (machine_id, config, created_at, updated_at) VALUES (?, ?, ?, ?)', [config.machineID, this.machineRow(config), now, now]),
    );
    this.machines.set(config.machineID, config);
    this.machineRevision++;
    return config;
  }

  async updateMachine(config: MachineConfig): Promise<MachineConfig> {
    this.getMachine(config.machineID);
    await this.db.write((tx) =>
      tx.run('UPDATE machines SET config = ?, updated_at = ? WHERE machine_id = ?', [this.machineRow(config), Date.now(), config.machineID]),
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

/** Runs `job` inside BEGIN IMMEDIATE … COMMIT on a write job that needs statements outside the transaction too. */
async function inTransaction(tx: WriteTx, job: () => Promise<void>): Promise<void> {
  await tx.run('BEGIN IMMEDIATE');
  try {
    await job();
    await tx.run('COMMIT');
  } catch (err) {
    await tx.run('ROLLBACK').catch(() => undefined);
    throw err;
  }
}
