/**
 * The OPC UA DriverClient. connect() opens a fresh link, finds the machine in
 * the address space and subscribes to its status values; reads are served
 * from the subscription while it is alive and Good, and by the Read service
 * otherwise (the subscription is then recreated in the background).
 */
import type { DataValue } from 'node-opcua';
import {
  assertFamily, unsupportedFamily,
  type ConnectionLost, type DriverClient, type DriverDeps, type FamilyValues, type ItemFamily, type ReadOptions, type ReadableFamily,
} from '../../core/driver-seam/driver.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import { withTimeout } from '../../core/driver-seam/timeout.js';
import { AddressSpaceBrowser, type MachineLayout } from './address-space.js';
import { OpcuaLink, type LinkTarget } from './connection.js';
import { conditionNodeIds, familiesOf, plannedFamilies, statusNodeIds } from './families.js';
import { findProgramDirectory, type ProgramDirectory, type ProgramDirectoryLookup } from './file-transfer.js';
import { conditionsOf } from './readings.js';
import { textOf } from './text-value.js';
import { toAlarms, toCncStatus, type ConditionReading } from './mapping.js';
import type { NodeItem, OpcuaOptions } from './options.js';
import { StatusSubscription } from './subscription.js';
import { ToolList } from './tools.js';
import { inDriverRequest } from '../../core/telemetry/drivers.js';

/** Minimum pause between two attempts to recreate a broken subscription. */
const RESUBSCRIBE_PAUSE_MS = 2_000;

/** Everything that belongs to one connected link; replaced as a whole on reconnect. */
interface Session {
  link: OpcuaLink;
  browser: AddressSpaceBrowser;
  layout: MachineLayout;
  subscription: StatusSubscription | undefined;
  tools: ToolList | undefined;
  /** The program directory, or why there is none. */
  programs: ProgramDirectoryLookup;
  resubscribing: boolean;
  lastSubscribeAttempt: number;
}

/** Counters for diagnostics and tests. */
export interface OpcuaClientStats {
  subscriptionsCreated: number;
  polledReads: number;
  notifications: number;
}

export class OpcuaClient implements DriverClient {
  readonly scheme = 'opcua';
  private familySet: Set<ItemFamily>;
  private session: Session | undefined;
  private generation = 0;
  private readonly listeners: Array<(event: ConnectionLost) => void> = [];
  private readonly counters = { subscriptionsCreated: 0, polledReads: 0, notificationsBefore: 0 };

  constructor(
    private readonly target: LinkTarget,
    private readonly deps: DriverDeps,
  ) {
    this.familySet = plannedFamilies(target.options);
  }

  /** Before the first connect: what the model and the NodeId map can give; after: what this server has. */
  get families(): ReadonlySet<ItemFamily> {
    return this.familySet;
  }

  get options(): OpcuaOptions {
    return this.target.options;
  }

  /** The machine's BrowseName and item NodeIds found at the last connect. */
  get layout(): MachineLayout | undefined {
    return this.session?.layout;
  }

  get stats(): OpcuaClientStats {
    return {
      subscriptionsCreated: this.counters.subscriptionsCreated,
      polledReads: this.counters.polledReads,
      notifications: this.counters.notificationsBefore + (this.session?.subscription?.notifications ?? 0),
    };
  }

  async connect(): Promise<void> {
    const generation = ++this.generation;
    await this.drop();
    const attempt = this.establish(generation);
    try {
      await withTimeout(attempt, this.options.connectTimeoutMs, 'opcua connect', 'driverOptions.connectTimeoutMs');
    } catch (error) {
      // A connect finishing after its timeout sees a newer generation and closes its own link.
      if (this.generation === generation) this.generation += 1;
      attempt.catch(() => undefined);
      throw error;
    }
  }

  async close(): Promise<void> {
    this.generation += 1;
    await this.drop();
  }

  async read<F extends ReadableFamily>(family: F, options: ReadOptions = {}): Promise<FamilyValues[F]> {
    assertFamily(this, family);
    const s = this.current();
    const value = await this.readFamily(s, family, options);
    return value as FamilyValues[F];
  }

  async downloadProgram(dir: string, name: string): Promise<Buffer> {
    return this.programDirectory().download(dir, name);
  }

  async uploadProgram(dir: string, name: string, content: Buffer): Promise<void> {
    await this.programDirectory().upload(dir, name, content);
  }

  /** OPC UA carries a file as a ByteString: every byte as it is. */
  programByteLimits(): null {
    return null;
  }

  onConnectionLost(listener: (event: ConnectionLost) => void): void {
    this.listeners.push(listener);
  }

  private async establish(generation: number): Promise<OpcuaLink> {
    const link = await OpcuaLink.open(this.target);
    try {
      if (generation !== this.generation) throw new GatewayError('MACHINE_NOT_CONNECTED', 'opcua: connect superseded');
      const browser = new AddressSpaceBrowser(link);
      const layout = await browser.layout(this.options);
      const programs = await findProgramDirectory(link, browser, layout, this.options);
      if (programs.missing !== undefined && this.options.programDirectory !== undefined) this.deps.logger.warn(`opcua: ${programs.missing}; programs are not transferred`);
      const session: Session = { link, browser, layout, subscription: undefined, tools: undefined, programs, resubscribing: false, lastSubscribeAttempt: 0 };
      if (layout.nodes.tools) session.tools = new ToolList(link, browser, layout.nodes.tools);
      if (this.options.subscription) await this.subscribe(session);
      if (generation !== this.generation) throw new GatewayError('MACHINE_NOT_CONNECTED', 'opcua: connect superseded');
      this.familySet = familiesOf(layout, programs.directory !== undefined);
      if (!this.familySet.has('status')) this.deps.logger.warn('opcua: no ChannelState found and none in driverOptions.nodes; status is unsupported');
      link.onLost((reason) => this.lost(link, reason));
      this.session = session;
      return link;
    } catch (error) {
      await link.close();
      throw error;
    }
  }

  private async subscribe(s: Session): Promise<void> {
    s.lastSubscribeAttempt = this.deps.now();
    const nodeIds = statusNodeIds(s.layout);
    if (nodeIds.length === 0) return;
    try {
      const subscription = await StatusSubscription.create(s.link, nodeIds, this.options.publishingIntervalMs, this.deps.now, this.deps.logger);
      this.counters.subscriptionsCreated += 1;
      s.subscription = subscription;
    } catch (error) {
      // Servers without subscription support are read by polling.
      this.deps.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'opcua: cannot subscribe; polling');
    }
  }

  /** Replaces a broken or silent subscription in the background, at most every RESUBSCRIBE_PAUSE_MS. */
  private resubscribe(s: Session): void {
    if (!this.options.subscription || s.resubscribing || s.link.dead) return;
    if (this.deps.now() - s.lastSubscribeAttempt < RESUBSCRIBE_PAUSE_MS) return;
    s.resubscribing = true;
    const old = s.subscription;
    s.subscription = undefined;
    if (old) this.counters.notificationsBefore += old.notifications;
    void (async () => {
      try {
        await old?.terminate(s.link);
        await this.subscribe(s);
        if (s.link.dead && s.subscription) s.subscription.broken = true;
      } finally {
        s.resubscribing = false;
      }
    })();
  }

  private lost(link: OpcuaLink, reason: string): void {
    if (this.session?.link !== link) return;
    this.session = undefined;
    for (const listener of this.listeners) listener({ reason: `opcua: ${reason}` });
  }

  private async drop(): Promise<void> {
    const s = this.session;
    this.session = undefined;
    if (!s) return;
    this.counters.notificationsBefore += s.subscription?.notifications ?? 0;
    if (s.subscription) s.subscription.broken = true;
    // Closing the session deletes its subscriptions on the server too.
    await s.link.close();
  }

  /** The connected server's program directory; DRIVER_FAMILY_UNSUPPORTED with the reason when it has none. */
  private programDirectory(): ProgramDirectory {
    const missing = this.session?.programs.missing;
    if (missing !== undefined) throw new GatewayError('DRIVER_FAMILY_UNSUPPORTED', `driver '${this.scheme}' does not support item family 'programFiles': ${missing}`);
    assertFamily(this, 'programFiles');
    const { programs } = this.current();
    if (!programs.directory) throw unsupportedFamily(this.scheme, 'programFiles');
    return programs.directory;
  }

  private current(): Session {
    const s = this.session;
    if (!s || s.link.dead) throw new GatewayError('MACHINE_NOT_CONNECTED', 'opcua: not connected');
    return s;
  }

  /** Values of `nodeIds`: from the subscription when it has them all Good, else one Read request. */
  private async values(s: Session, what: string, nodeIds: readonly string[]): Promise<DataValue[]> {
    const subscribed = s.subscription?.snapshot(nodeIds);
    if (subscribed) return subscribed;
    this.resubscribe(s);
    this.counters.polledReads += 1;
    const peer = this.target.peer;
    return peer ? inDriverRequest('opcua Read', peer, 'Read', () => s.link.readValues(what, nodeIds)) : s.link.readValues(what, nodeIds);
  }

  /**
   * Reads the items of one family (plus the condition fields when `withAlarms`) in one go, keyed by
   * item; `required` items must come back Good.
   */
  private async items(
    s: Session, family: ItemFamily, required: readonly NodeItem[], optional: readonly NodeItem[] = [], withAlarms = false,
  ): Promise<{ items: Map<NodeItem, DataValue>; conditions: ConditionReading[] }> {
    const wanted = [...required, ...optional].filter((item) => s.layout.nodes[item] !== undefined);
    const conditionIds = withAlarms ? conditionNodeIds(s.layout) : [];
    const values = await this.values(s, `read ${family}`, [...wanted.map((item) => s.layout.nodes[item] ?? ''), ...conditionIds]);
    const items = new Map<NodeItem, DataValue>();
    wanted.forEach((item, i) => {
      const value = values[i];
      if (value?.statusCode.isGood()) items.set(item, value);
      else if (required.includes(item)) {
        throw new GatewayError('DRIVER_REQUEST_FAILED', `opcua: ${item} (${s.layout.nodes[item]}) answered ${value?.statusCode.name ?? 'nothing'}`);
      }
    });
    const byId = new Map(conditionIds.map((id, i) => [id, values[wanted.length + i]]));
    return { items, conditions: withAlarms ? conditionsOf(s.layout, byId) : [] };
  }

  private number(s: Session, values: Map<NodeItem, DataValue>, item: NodeItem): number {
    const v: unknown = values.get(item)?.value.value;
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      throw new GatewayError('DRIVER_REQUEST_FAILED', `opcua: ${item} (${s.layout.nodes[item]}) is not a number`);
    }
    return v * (s.layout.scale[item] ?? 1);
  }

  private optionalNumber(s: Session, values: Map<NodeItem, DataValue>, item: NodeItem): number | undefined {
    return values.has(item) ? this.number(s, values, item) : undefined;
  }

  private async readFamily(s: Session, family: ReadableFamily, options: ReadOptions): Promise<unknown> {
    const now = this.deps.now();
    switch (family) {
      case 'status': {
        const { items: v, conditions } = await this.items(s, family, ['channelState'], ['channelMode', 'programName', 'programState'], true);
        const alarms = toAlarms(conditions, this.options, now);
        return toCncStatus({
          channelState: this.number(s, v, 'channelState'),
          channelMode: this.optionalNumber(s, v, 'channelMode'),
          programName: textOf(v.get('programName')),
          programState: textOf(v.get('programState')),
          alarms,
          time: now,
        });
      }
      case 'alarm':
        return toAlarms((await this.items(s, family, [], [], true)).conditions, this.options, now);
      case 'feedAndSpindle': {
        const items = ['feedRate', 'feedOverride', 'spindleSpeed', 'spindleOverride', 'rapidOverride'] as const;
        const { items: v } = await this.items(s, family, items);
        const [feedRate, feedOverride, spindleSpeed, spindleOverride, rapidOverride] = items.map((item) => this.number(s, v, item));
        return { feedRate, feedOverride, spindleSpeed, spindleOverride, rapidOverride };
      }
      case 'count': {
        const { items: v } = await this.items(s, family, ['partCount', 'partsTotal'], ['partsRequired']);
        const partsRequired = this.optionalNumber(s, v, 'partsRequired');
        return { partCount: this.number(s, v, 'partCount'), partsTotal: this.number(s, v, 'partsTotal'), ...(partsRequired !== undefined ? { partsRequired } : {}) };
      }
      case 'toolNumber': {
        const { items: v } = await this.items(s, family, ['toolNumber']);
        return { toolNumber: this.number(s, v, 'toolNumber') };
      }
      case 'timeData': {
        const items = ['powerOnTime', 'operatingTime', 'cuttingTime', 'cycleTime'] as const;
        const { items: v } = await this.items(s, family, items);
        const [powerOnTime, operatingTime, cuttingTime, cycleTime] = items.map((item) => this.number(s, v, item));
        return { powerOnTime, operatingTime, cuttingTime, cycleTime };
      }
      case 'toolLife':
        if (!s.tools) throw unsupportedFamily(this.scheme, family);
        return s.tools.read(options);
      case 'programList':
        return this.programDirectory().list(options);
      case 'currentProgram':
        return this.programDirectory().current(s.layout);
      default:
        throw unsupportedFamily(this.scheme, family);
    }
  }
}
