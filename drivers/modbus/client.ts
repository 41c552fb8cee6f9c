/**
 * The Modbus DriverClient: reads a family by running its planned requests on
 * the machine's connection, decoding the items and building the family value.
 * The families it declares are the sections its register map has.
 */
import {
  assertFamily, unsupportedFamily,
  type ActiveAlarm, type ConnectionLost, type DriverClient, type DriverDeps, type FamilyValues, type ItemFamily, type ReadableFamily,
} from '../../core/driver-seam/driver.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import { inDriverRequest, type DriverPeer } from '../../core/telemetry/drivers.js';
import { decodeRegisters, type DecodedValue } from './codec.js';
import { ModbusConnection, type ReadResult } from './connection.js';
import {
  alarmsFrom, countFrom, feedAndSpindleFrom, loadsFrom, positionsFrom, statusFrom, timeDataFrom, toolNumberFrom, type ReadValues,
} from './mapping.js';
import type { ModbusOptions } from './options.js';
import { planReads, type CoalesceLimits, type ReadRequest } from './read-plan.js';
import { FAMILY_SECTIONS, sectionItems, type MappedFamily, type RegisterMap } from './register-map.js';

type FamilyPlans = Partial<Record<MappedFamily, ReadRequest[]>>;

/** Plans by map and limits: machines sharing a map (e.g. the default one) share its plans. */
const planCache = new WeakMap<RegisterMap, Map<string, FamilyPlans>>();

/** True when the status's alarm level can only come from the alarm slots, so a status read reads them too. */
function statusNeedsAlarms(map: RegisterMap): boolean {
  return map.status !== undefined && !map.status.alarmLevel && !map.status.alarmStatus && map.alarms !== undefined;
}

/** The coalesced requests of every family the map serves, made once per map and limits. */
export function familyPlans(map: RegisterMap, limits: CoalesceLimits): FamilyPlans {
  const key = `${limits.maxGapRegisters}/${limits.maxRegistersPerRead}/${limits.maxGapBits}/${limits.maxBitsPerRead}`;
  let byLimits = planCache.get(map);
  if (!byLimits) planCache.set(map, (byLimits = new Map()));
  const cached = byLimits.get(key);
  if (cached) return cached;
  const plans: FamilyPlans = {};
  for (const [family, section] of Object.entries(FAMILY_SECTIONS) as [MappedFamily, keyof RegisterMap][]) {
    if (map[section] === undefined) continue;
    const items = sectionItems(map, section);
    if (family === 'status' && statusNeedsAlarms(map)) items.push(...sectionItems(map, 'alarms'));
    plans[family] = planReads(items, limits);
  }
  byLimits.set(key, plans);
  return plans;
}

export class ModbusClient implements DriverClient {
  readonly scheme = 'modbus';
  readonly families: ReadonlySet<ItemFamily>;
  private readonly map: RegisterMap;
  private readonly plans: FamilyPlans;
  private readonly connection: ModbusConnection;
  private readonly listeners: Array<(event: ConnectionLost) => void> = [];
  private readonly now: () => number;
  /** When each alarm slot's current code was first seen, for maps without `since`. */
  private readonly alarmFirstSeen = new Map<number, { code: string; since: number }>();

  /** Who this client's requests go to, for their spans. */
  private readonly peer: DriverPeer;

  constructor(machine: { machineID?: string; ip: string; port: number }, options: ModbusOptions, deps: Pick<DriverDeps, 'now'>) {
    this.peer = { protocol: 'modbus', ...(machine.machineID !== undefined ? { machineId: machine.machineID } : {}), address: machine.ip, port: machine.port };
    this.map = options.map;
    this.now = deps.now;
    this.plans = familyPlans(options.map, options);
    this.families = new Set(Object.keys(this.plans) as MappedFamily[]);
    this.connection = new ModbusConnection(
      { host: machine.ip, port: machine.port, unitId: options.unitId, connectTimeoutMs: options.connectTimeoutMs, requestTimeoutMs: options.requestTimeoutMs },
      (reason) => {
        for (const listener of this.listeners) listener({ reason });
      },
    );
  }

  /** The planned requests of a family (for diagnostics and tests). */
  requestsFor(family: MappedFamily): readonly ReadRequest[] {
    return this.plans[family] ?? [];
  }

  connect(): Promise<void> {
    return this.connection.open();
  }

  async close(): Promise<void> {
    this.connection.close();
  }

  async read<F extends ReadableFamily>(family: F): Promise<FamilyValues[F]> {
    assertFamily(this, family);
    const plan = this.plans[family as MappedFamily];
    if (!plan) throw unsupportedFamily(this.scheme, family);
    const values = await this.readValues(plan);
    return this.build(family as MappedFamily, values) as FamilyValues[F];
  }

  downloadProgram(): Promise<Buffer> {
    return Promise.reject(unsupportedFamily(this.scheme, 'programFiles'));
  }

  uploadProgram(): Promise<void> {
    return Promise.reject(unsupportedFamily(this.scheme, 'programFiles'));
  }

  onConnectionLost(listener: (event: ConnectionLost) => void): void {
    this.listeners.push(listener);
  }

  private async readValues(plan: readonly ReadRequest[]): Promise<ReadValues> {
    if (!this.connection.isOpen) throw new GatewayError('MACHINE_NOT_CONNECTED', 'modbus: not connected');
    // All requests queue at once; the connection still sends them one at a time.
    const results = await Promise.all(plan.map((request) => inDriverRequest(`modbus read ${request.function}`, this.peer, request.function, () => this.connection.read(request.function, request.address, request.count))));
    const values = new Map<string, DecodedValue>();
    plan.forEach((request, i) => decodeInto(values, request, results[i] as ReadResult));
    return values;
  }

  private build(family: MappedFamily, values: ReadValues): FamilyValues[MappedFamily] {
    const map = this.map;
    const now = this.now();
    switch (family) {
      case 'status': {
        const alarms: ActiveAlarm[] | undefined = statusNeedsAlarms(map) ? alarmsFrom(map, values, this.alarmFirstSeen, now) : undefined;
        return statusFrom(map, values, now, alarms);
      }
      case 'alarm': return alarmsFrom(map, values, this.alarmFirstSeen, now);
      case 'feedAndSpindle': return feedAndSpindleFrom(required(map.feedAndSpindle), values);
      case 'toolNumber': return toolNumberFrom(required(map.toolNumber), values);
      case 'timeData': return timeDataFrom(required(map.timeData), values);
      case 'count': return countFrom(required(map.count), values);
      case 'position': return positionsFrom(required(map.axes), values);
      case 'load': return loadsFrom(required(map.loads), values);
    }
  }
}

/** A section the plan was made from; present whenever its family is declared. */
function required<T>(section: T | undefined): T {
  if (section === undefined) throw new GatewayError('DRIVER_REQUEST_FAILED', 'modbus: the register map lost a section it was planned with');
  return section;
}

/** Decodes the items a request answered into `values`. */
export function decodeInto(values: Map<string, DecodedValue>, request: ReadRequest, result: ReadResult): void {
  for (const { path, item, offset } of request.items) {
    if (item.function === 'coils' || item.function === 'discreteInputs') values.set(path, (result as boolean[])[offset] === true);
    else values.set(path, decodeRegisters(result as number[], offset, item));
  }
}
