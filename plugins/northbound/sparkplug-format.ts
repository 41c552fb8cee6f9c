/**
 * Sparkplug B (`spBv1.0`): the gateway is the edge node, each machine a
 * device, as the specification's operational rules say:
 *
 * - every CONNECT's will is an NDEATH with the next `bdSeq` (0-255, one
 *   more at every CONNECT, kept across restarts); the NBIRTH carries the
 *   same bdSeq, `seq` 0 and `Node Control/Rebirth` (false, without alias);
 * - a DBIRTH per machine declares every metric (name, alias, type, latest
 *   value) before its first DDATA; a DDATA carries a row's metrics by alias
 *   only, each stamped with the row's time and, when forwarded from the
 *   backlog, `is_historical`; a row with a field no birth declared gets a
 *   new DBIRTH first;
 * - every message after the NBIRTH carries `seq`, one more than the one
 *   before, 255 followed by 0;
 * - a State row saying `offline` ends its device with a DDEATH after its
 *   DDATA; the device's rows are not published until it is back (its next
 *   State row), when a DBIRTH carries its values; a machine made inactive
 *   or deleted gets its DDEATH at once;
 * - an NCMD with `Node Control/Rebirth` true makes the whole birth again
 *   (same bdSeq) before any more data; a clean stop publishes the NDEATH.
 */
import type { SequencedRow } from '../../core/roles/gateway/history/sequence.js';
import type { Database } from '../../core/store/database.js';
import type { FleetStates } from './fleet-view.js';
import type { OutMessage, TargetFormat } from './format.js';
import { decodePayload, encodePayload, type UMetric } from './sparkplug-codec.js';
import { metricsOfRow, SparkplugDevices, type Device } from './sparkplug-devices.js';
import { sparkplugTopics } from './topics.js';

export const REBIRTH_METRIC = 'Node Control/Rebirth';
/** The largest NCMD payload read; a rebirth request is a few dozen bytes. */
const MAX_COMMAND_BYTES = 65_536;

export interface SparkplugDeps {
  groupId: string;
  edgeNodeId: string;
  version: string;
  fleet: FleetStates;
  db: Database;
  now: () => number;
  /** The last bdSeq used (-1 before the first), and where the next is kept when a CONNECT takes it. */
  lastBdSeq: number;
  keepBdSeq(bdSeq: number): void;
}

export class SparkplugFormat implements TargetFormat {
  private readonly topics: ReturnType<typeof sparkplugTopics>;
  private readonly devices: SparkplugDevices;
  private bdSeq: number;
  private seq = 0;

  constructor(private readonly deps: SparkplugDeps) {
    this.topics = sparkplugTopics(deps.groupId, deps.edgeNodeId);
    this.devices = new SparkplugDevices(deps.db);
    this.bdSeq = deps.lastBdSeq;
  }

  private death(): Buffer {
    return encodePayload({ timestamp: this.deps.now(), metrics: [{ name: 'bdSeq', type: 'Int64', value: this.bdSeq }] });
  }

  /** The seq of the next message after the NBIRTH. */
  private nextSeq(): number {
    this.seq = (this.seq + 1) % 256;
    return this.seq;
  }

  will() {
    this.bdSeq = (this.bdSeq + 1) % 256;
    this.deps.keepBdSeq(this.bdSeq);
    // QoS 1, not retained: the specification's will.
    return { topic: this.topics.node('NDEATH'), payload: this.death(), qos: 1 as const, retain: false };
  }

  subscriptions(): string[] {
    return [this.topics.node('NCMD')];
  }

  async births(atSeq: number): Promise<OutMessage[]> {
    const now = this.deps.now();
    this.seq = 0;
    const nbirth = encodePayload({
      timestamp: now,
      seq: 0,
      metrics: [
        { name: 'bdSeq', type: 'Int64', value: this.bdSeq, timestamp: now },
        { name: REBIRTH_METRIC, type: 'Boolean', value: false, timestamp: now },
        { name: 'Properties/Version', type: 'String', value: this.deps.version, timestamp: now },
      ],
    });
    const out: OutMessage[] = [{ topic: this.topics.node('NBIRTH'), payload: nbirth, retain: false }];
    for (const machine of this.deps.fleet.machines()) {
      if (machine.state === 'inactive') continue;
      const device = await this.devices.load(machine.machineID, atSeq + 1);
      device.born = false;
      if (!isOffline(device)) out.push(this.dbirth(device, now));
    }
    // Devices born earlier in the session that the fleet no longer holds (a deleted machine still in the backlog).
    for (const machineID of this.devices.born()) {
      const device = this.devices.get(machineID) as Device;
      if (!this.deps.fleet.machine(machineID)) out.push(this.dbirth(device, now));
    }
    return out;
  }

  private dbirth(device: Device, now: number): OutMessage {
    device.born = true;
    const payload = encodePayload({ timestamp: now, seq: this.nextSeq(), metrics: this.devices.birthMetrics(device, now) });
    return { topic: this.topics.device('DBIRTH', device.machineID), payload, retain: false };
  }

  private ddeath(device: Device): OutMessage {
    device.born = false;
    return { topic: this.topics.device('DDEATH', device.machineID), payload: encodePayload({ timestamp: this.deps.now(), seq: this.nextSeq() }), retain: false };
  }

  prepare(rows: readonly SequencedRow[]): Promise<void> {
    return this.devices.prepare(rows);
  }

  messages(rows: readonly SequencedRow[], i: number, historical: boolean): OutMessage[] {
    const row = rows[i] as SequencedRow;
    const device = this.devices.get(row.machineID);
    if (!device) throw new Error(`sparkplug: no device for machine '${row.machineID}'; prepare() reads it first`);
    const metrics = metricsOfRow(row);
    const undeclared = this.devices.apply(device, metrics, row.ts);
    // A device whose history says offline stays dead (its rows wait for its return); back, it is born with this row's values.
    if (!device.born) return isOffline(device) ? [] : [this.dbirth(device, this.deps.now())];
    if (undeclared.length > 0) return [this.dbirth(device, this.deps.now())];
    const ddata = encodePayload({ timestamp: this.deps.now(), seq: this.nextSeq(), metrics: this.devices.dataMetrics(device, metrics, row.ts, historical) });
    const out: OutMessage[] = [{ topic: this.topics.device('DDATA', row.machineID), payload: ddata, retain: false }];
    if (row.cls === 'State' && isOffline(device)) out.push(this.ddeath(device));
    return out;
  }

  machineGone(machineID: string, deleted: boolean): OutMessage[] {
    const device = this.devices.get(machineID);
    const out = device?.born ? [this.ddeath(device)] : [];
    if (deleted) this.devices.drop(machineID);
    return out;
  }

  command(topic: string, payload: Buffer): boolean {
    if (topic !== this.topics.node('NCMD') || payload.length > MAX_COMMAND_BYTES) return false;
    let metrics: UMetric[] | null | undefined;
    try {
      metrics = decodePayload(payload).metrics;
    } catch {
      return false;
    }
    return (metrics ?? []).some((m) => m.name === REBIRTH_METRIC && m.value === true);
  }

  farewell(): OutMessage[] {
    return [{ topic: this.topics.node('NDEATH'), payload: this.death(), retain: false }];
  }

  reset(): void {
    this.devices.clear();
  }
}

/** Whether a device's history last said it is offline. */
function isOffline(device: Device): boolean {
  return device.values.get('State/state')?.value === 'offline';
}
