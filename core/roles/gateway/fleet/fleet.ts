/**
 * The fleet: the actor system holding one machine actor per active machine.
 * Applying a machine config starts, restarts or stops its actor live; an
 * inactive machine holds no actor and no connection but is still known.
 * Everything read here comes from actor snapshots; nothing contacts a machine.
 */
import { createActor } from 'xstate';
import type { Logger } from 'pino';
import type { MachineConfig, MachineTaskClass } from '../machine-config.js';
import type { DriverClient } from '../../../driver-seam/driver.js';
import { GatewayError } from '../../../interfaces/errors.js';
import type { DriverRegistry } from './driver-registry.js';
import type { DerivedState, ConnectionState } from './derive-state.js';
import { deriveState, derivedValidUntil } from './derive-state.js';
import type { MotionRecording } from '../config.js';
import type { HistorySink } from './machine-history.js';
import { machineActorLogic, type MachineActorRef } from './machine-actor.js';
import { deriveInputOf, type ConnectionHealth, type MachineContext, type TaskCache } from './machine-actions.js';
import { FleetRows } from './rows.js';
import type { MachineSnapshot } from './machine-snapshot.js';

export interface FleetDeps {
  drivers: DriverRegistry;
  sink: HistorySink;
  logger: Logger;
  timeZone: string;
  heartbeatMs: number;
  /** Motion reads and their recording (history.motion); read and recorded at every change when absent. */
  motion?: MotionRecording;
  dataDir: string;
  now?: () => number;
  onSampleLag?: (task: MachineTaskClass, lagMs: number) => void;
}

/** The view of a machine with an actor. Derived on first use: the connection-health view of a thousand machines never needs it. */
class LiveMachineSnapshot implements MachineSnapshot {
  readonly connection: ConnectionHealth;
  readonly cache: Partial<TaskCache>;
  private derivedState: DerivedState | undefined;

  constructor(
    readonly config: MachineConfig,
    private readonly context: Pick<MachineContext, 'deps' | 'cache' | 'connection'>,
    private readonly now: number,
  ) {
    this.connection = context.connection;
    this.cache = context.cache;
  }

  get derived(): DerivedState {
    this.derivedState ??= deriveState(deriveInputOf(this.context, this.now));
    return this.derivedState;
  }

  get derivedUntil(): number {
    return derivedValidUntil(deriveInputOf(this.context, this.now));
  }
}

interface Entry {
  config: MachineConfig;
  actor?: MachineActorRef;
  client?: DriverClient;
}

const STOPPED: ConnectionHealth = { state: 'stopped' as ConnectionState, since: 0, attempts: 0, failures: 0 };

export class Fleet {
  private readonly machines = new Map<string, Entry>();
  private readonly now: () => number;
  private stopping = false;
  /** Each machine's fleet entries, kept ready and published where they change (rows.ts). */
  readonly rows: FleetRows;

  constructor(private readonly deps: FleetDeps) {
    this.now = deps.now ?? Date.now;
    this.rows = new FleetRows((machineID, now) => this.snapshotAt(machineID, now), this.now);
  }

  /** Starts, restarts or stops the machine's actor to match `config`. */
  async apply(config: MachineConfig): Promise<void> {
    if (this.stopping) return;
    const existing = this.machines.get(config.machineID);
    if (existing) await this.stopEntry(existing);
    const entry: Entry = { config };
    this.machines.set(config.machineID, entry);
    this.rows.publish(config.machineID, 'both');
    if (config.isActive) this.startEntry(entry);
  }

  /** Stops and forgets a machine. */
  async remove(machineID: string): Promise<void> {
    const entry = this.machines.get(machineID);
    if (!entry) return;
    this.machines.delete(machineID);
    this.rows.remove(machineID);
    await this.stopEntry(entry);
  }

  private startEntry(entry: Entry): void {
    const { config } = entry;
    const logger = this.deps.logger.child({ machineID: config.machineID });
    const client = this.deps.drivers.create(config, { logger, dataDir: this.deps.dataDir, now: this.now });
    const actor = createActor(machineActorLogic, {
      input: {
        config,
        client,
        sink: this.deps.sink,
        timeZone: this.deps.timeZone,
        heartbeatMs: this.deps.heartbeatMs,
        ...(this.deps.motion ? { motion: this.deps.motion } : {}),
        now: this.now,
        ...(this.deps.onSampleLag ? { onSampleLag: this.deps.onSampleLag } : {}),
        publish: (kind) => {
          if (this.machines.get(config.machineID) === entry) this.rows.publish(config.machineID, kind);
        },
      },
    });
    client.onConnectionLost((event) => {
      if (entry.actor === actor) actor.send({ type: 'CONNECTION_LOST', reason: event.reason });
    });
    actor.subscribe({ error: (err) => logger.error({ err }, 'machine actor failed') });
    entry.actor = actor;
    entry.client = client;
    actor.start();
  }

  private async stopEntry(entry: Entry): Promise<void> {
    const { actor, client } = entry;
    entry.actor = undefined;
    entry.client = undefined;
    // A machine being restarted reads as stopped meanwhile.
    if (actor && this.machines.get(entry.config.machineID) === entry) this.rows.publish(entry.config.machineID, 'both');
    actor?.stop();
    if (client) {
      await client.close().catch((err: unknown) => this.deps.logger.warn({ err, machineID: entry.config.machineID }, 'driver close failed'));
    }
  }

  has(machineID: string): boolean {
    return this.machines.has(machineID);
  }

  ids(): string[] {
    return [...this.machines.keys()];
  }

  /** The live view of a machine; throws GENERAL_MACHINE_ID_NOT_EXISTED for an unknown one. */
  snapshot(machineID: string): MachineSnapshot {
    return this.snapshotAt(machineID, this.now());
  }

  private snapshotAt(machineID: string, now: number): MachineSnapshot {
    const entry = this.machines.get(machineID);
    if (!entry) throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineID '${machineID}' does not exist`);
    if (!entry.actor) {
      return {
        config: entry.config,
        connection: STOPPED,
        cache: {},
        derived: deriveState({
          isActive: entry.config.isActive,
          statusTaskEnabled: entry.config.tasks.CNCStatus.enabled,
          connection: { state: 'stopped' },
          statusIntervalMs: entry.config.tasks.CNCStatus.intervalMs,
          now,
        }),
        derivedUntil: Infinity,
      };
    }
    return new LiveMachineSnapshot(entry.config, entry.actor.getSnapshot().context, now);
  }

  /** The driver client of an active machine, for live reads and file transfer. */
  client(machineID: string): DriverClient {
    const entry = this.machines.get(machineID);
    if (!entry) throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineID '${machineID}' does not exist`);
    if (!entry.client) throw new GatewayError('GENERAL_MACHINE_ID_NOT_EXISTED', `machineID '${machineID}' is inactive`);
    return entry.client;
  }

  /**
   * The active machines of `machines` whose actor and driver are not
   * created (none once the fleet has started them all); whether a machine is
   * online does not count.
   */
  notStarted(machines: readonly MachineConfig[]): string[] {
    return machines.filter((m) => m.isActive && this.machines.get(m.machineID)?.client === undefined).map((m) => m.machineID);
  }

  /** The actor's connection state name, for tests and diagnostics. */
  connectionState(machineID: string): ConnectionState {
    return this.snapshot(machineID).connection.state;
  }

  /** Stops every actor, then closes every driver. */
  async stop(): Promise<void> {
    this.stopping = true;
    const entries = [...this.machines.values()];
    for (const entry of entries) entry.actor?.stop();
    await Promise.all(entries.map((entry) => this.stopEntry(entry)));
  }
}
