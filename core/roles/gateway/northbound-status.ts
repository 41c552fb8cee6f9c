/**
 * The northbound targets as others see them (gateway-info's `northbound`,
 * the fleet console's system page, which imports these types): public
 * fields only, a password never. Types only, so the console can import
 * them; the service is declared in northbound-service.ts.
 */

/** One target's state: where it publishes, how far the broker has acknowledged, what is left and what went wrong. */
export interface NorthboundTargetStatus {
  name: string;
  /** What the configuration says the target is for, if anything. */
  description?: string;
  format: 'uns' | 'sparkplug';
  /** The broker, without any credentials in the URL. */
  brokerUrl: string;
  /** The UNS topic root, or the Sparkplug group_id. */
  topicRoot: string;
  /** The Sparkplug edge node id (the gateway); only for a Sparkplug target. */
  edgeNodeId?: string;
  enabled: boolean;
  /** disabled, connecting (an attempt under way), connected, retrying (waiting after a refusal or a lost connection), stopped. */
  state: 'disabled' | 'connecting' | 'connected' | 'retrying' | 'stopped';
  /** Attempts that failed since the last accepted connection, and when the next starts (unix ms) while retrying. */
  failedAttempts: number;
  nextAttemptAt?: number;
  /** The highest history sequence number through which the broker acknowledged every row (persisted). */
  cursor: number;
  /** The highest committed history sequence number, which the cursor catches up with. */
  committedThrough: number;
  /** Rows still to publish (by sequence number: committed rows after the cursor) and the age of the oldest of them, in seconds (0 when none). */
  backlogRows: number;
  backlogSeconds: number;
  /** Rows the target can no longer publish because retention deleted them (or the history never kept them) first, since the target exists. */
  lostRows: number;
  /** Rows skipped because their message was larger than the broker's maximum packet size, since the target exists. */
  oversizeRows: number;
  /** Messages the broker acknowledged since the gateway started. */
  published: number;
  /** Messages handed to the broker and not yet acknowledged, and the most allowed. */
  inFlight: number;
  maxInFlight: number;
  /** Unix ms of the last accepted connection, and the last error (why an attempt failed, a connection ended, a row was skipped) with its time. */
  connectedAt?: number;
  lastError?: string;
  lastErrorAt?: number;
}

/** Every target, in configuration order; none when the configuration has no `northbound` section. */
export interface NorthboundStatus {
  targets: NorthboundTargetStatus[];
}
