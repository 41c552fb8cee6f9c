/**
 * What a target's format does (UNS JSON: uns-format.ts; Sparkplug B:
 * sparkplug-format.ts): the will of each connection, what a new session
 * publishes first, the messages of each history row, what a machine
 * changed in the configuration gives, and the farewell of a clean stop. The
 * forwarder (forwarder.ts) publishes the messages in the order given; a
 * format numbering its messages (Sparkplug's seq) numbers them as it makes
 * them, so nothing else is published between.
 */
import type { IClientOptions } from 'mqtt';
import type { SequencedRow } from '../../core/roles/gateway/history/sequence.js';

/** One MQTT message to publish. */
export interface OutMessage {
  topic: string;
  payload: Buffer | string;
  retain: boolean;
}

export interface TargetFormat {
  /** The will of the next CONNECT (UNS: the gateway offline; Sparkplug: NDEATH with the next bdSeq). */
  will(): NonNullable<IClientOptions['will']>;
  /** Topics to subscribe to once connected (Sparkplug: NCMD). */
  subscriptions(): string[];
  /**
   * What a session publishes first: UNS the gateway online and each
   * machine's state now; Sparkplug NBIRTH and a DBIRTH per machine (also
   * after a rebirth request). `atSeq`: the history position the session
   * starts from.
   */
  births(atSeq: number): Promise<OutMessage[]>;
  /** Reads what the next rows need from the history (states, a Sparkplug birth's values), before `messages`. */
  prepare(rows: readonly SequencedRow[]): Promise<void>;
  /** The messages of row `i` of `rows` (read in order), forwarded from the backlog when `historical`. */
  messages(rows: readonly SequencedRow[], i: number, historical: boolean): OutMessage[];
  /** A machine made inactive or deleted in the configuration (UNS: its state; Sparkplug: its DDEATH). */
  machineGone(machineID: string, deleted: boolean): OutMessage[];
  /** A message on a subscribed topic; true when it asks for the births again (Sparkplug's Node Control/Rebirth). */
  command(topic: string, payload: Buffer): boolean;
  /** What a clean stop publishes before disconnecting (UNS: the gateway offline; Sparkplug: NDEATH). */
  farewell(): OutMessage[];
  /** The session ended, or the target goes back to its cursor: forget what was read ahead of it. */
  reset(): void;
}
