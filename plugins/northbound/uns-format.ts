/**
 * Unified Namespace JSON. One message per history row on
 * `{topicRoot}/{machineID}/{class}`:
 *
 *   {"seq":…,"ts":…,"machineID":"…","class":"…","data":{…},"state":"…","reason":"…"}
 *
 * `data` is the row's stored JSON as it is (never parsed and written
 * again), `state` and `reason` the derived state the row was recorded in
 * (row-states.ts). Retained beside them: `{topicRoot}/{machineID}/state`
 * with the machine's state now, and `{topicRoot}/_gateway/status`, the
 * gateway online, or offline by its will or its clean stop.
 */
import type { SequencedRow } from '../../core/roles/gateway/history/sequence.js';
import type { Database } from '../../core/store/database.js';
import type { FleetStates } from './fleet-view.js';
import type { OutMessage, TargetFormat } from './format.js';
import { RowStates } from './row-states.js';
import { unsTopics } from './topics.js';

export interface UnsDeps {
  root: string;
  gatewayName: string;
  version: string;
  fleet: FleetStates;
  db: Database;
  now: () => number;
}

const text = JSON.stringify;

export class UnsFormat implements TargetFormat {
  private readonly topics: ReturnType<typeof unsTopics>;
  private readonly states: RowStates;
  /** The time of each machine's retained state this session, so an older State row never replaces a newer state. */
  private readonly stateSince = new Map<string, number>();

  constructor(private readonly deps: UnsDeps) {
    this.topics = unsTopics(deps.root);
    this.states = new RowStates(deps.db);
  }

  private status(state: 'online' | 'offline'): string {
    return text({ state, gateway: this.deps.gatewayName, version: this.deps.version, ts: this.deps.now() });
  }

  private machineState(machineID: string, state: string, reason: string, ts: number): OutMessage {
    this.stateSince.set(machineID, ts);
    return { topic: this.topics.state(machineID), payload: text({ machineID, state, reason, ts }), retain: true };
  }

  will() {
    return { topic: this.topics.gatewayStatus(), payload: Buffer.from(this.status('offline')), qos: 1 as const, retain: true };
  }

  subscriptions(): string[] {
    return [];
  }

  births(): Promise<OutMessage[]> {
    const now = this.deps.now();
    const states = this.deps.fleet.machines().map((m) => this.machineState(m.machineID, m.state, m.reason, now));
    return Promise.resolve([{ topic: this.topics.gatewayStatus(), payload: this.status('online'), retain: true }, ...states]);
  }

  prepare(rows: readonly SequencedRow[]): Promise<void> {
    return this.states.prepare(rows);
  }

  messages(rows: readonly SequencedRow[], i: number, historical: boolean): OutMessage[] {
    const row = rows[i] as SequencedRow;
    const recorded = this.states.at(rows, i);
    const state = recorded ? `"state":${text(recorded.state)},"reason":${text(recorded.reason)}` : '"state":null,"reason":null';
    const payload = `{"seq":${row.seq},"ts":${row.ts},"machineID":${text(row.machineID)},"class":${text(row.cls)},"data":${row.data},${state}}`;
    const out: OutMessage[] = [{ topic: this.topics.row(row.machineID, row.cls), payload, retain: false }];
    // The retained state is the machine's state now: a State row from the backlog, or recorded before the session's start published the fleet's states, is older.
    if (row.cls === 'State' && !historical && recorded && row.ts >= (this.stateSince.get(row.machineID) ?? 0)) out.push(this.machineState(row.machineID, recorded.state, recorded.reason, row.ts));
    return out;
  }

  machineGone(machineID: string, deleted: boolean): OutMessage[] {
    // An empty retained message removes the retained state of a deleted machine.
    if (deleted) return [{ topic: this.topics.state(machineID), payload: '', retain: true }];
    return [this.machineState(machineID, 'inactive', 'inactive: machine isActive=false', this.deps.now())];
  }

  command(): boolean {
    return false;
  }

  farewell(): OutMessage[] {
    return [{ topic: this.topics.gatewayStatus(), payload: this.status('offline'), retain: true }];
  }

  reset(): void {
    this.states.forget();
    this.stateSince.clear();
  }
}
