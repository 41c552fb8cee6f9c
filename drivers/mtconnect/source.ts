/**
 * Where a machine's MTConnect observations come from: an SHDR adapter
 * (shdr-source.ts) or an agent (agent-source.ts). Both push into the
 * client's ObservationStore and say when something changed or the link was
 * lost; the client answers reads from the store.
 */
import type { DataItem } from './device-model.js';
import type { InputProblems } from './input-problems.js';
import type { Roles } from './roles.js';

export interface SourceEvents {
  /** New observations are in the store. */
  changed(): void;
  /** The link died after it opened; the reason names the peer and what happened. */
  lost(reason: string): void;
}

export interface MtconnectSource {
  /** The peer, for messages: `adapter host:port`, `agent http://… device 'x'`. */
  readonly where: string;
  /** True from a successful open until the link is lost or closed. */
  readonly alive: boolean;
  /** Bad input skipped while the stream went on. */
  readonly problems: InputProblems;
  /** The roles of the device's data items; undefined until the device is known. */
  readonly roles: Roles | undefined;
  /** Whether a data item counts as there: in the probe or Devices file, or, with the names table, received once. */
  present(item: DataItem): boolean;
  /** Whether the device has assets (an ASSET_CHANGED data item, or an asset received). */
  hasAssets(): boolean;
  /** Opens the link (a new one each time) and starts the flow of observations; rejects with a GatewayError. */
  open(): Promise<void>;
  /** Stops the flow and releases every socket and timer. Safe to call twice. */
  close(): Promise<void>;
}
