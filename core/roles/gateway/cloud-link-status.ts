/**
 * The gateway's cloud link as others see it (gateway-info's `cloud`): the
 * cloud-link plugin provides it as the service `cloud-link`. Public fields
 * only; the token never.
 */
/** The link's state as gateway-info shows it: never the token. */
export interface CloudLinkStatus {
  configured: boolean;
  /** Where the settings come from: the config file (and environment), or the API (`cloud-link.json`). */
  source?: 'config' | 'api';
  /** The broker, without any credentials in the URL. */
  brokerUrl?: string;
  /** The token's public id (the middle part of cgw_<id>_<secret>): the gateway's name in the cloud's topics. */
  tokenId?: string;
  user?: string;
  connected: boolean;
  /**
   * connecting (an attempt under way), connected, or retrying (waiting for
   * the next attempt after a refusal, an unreachable broker or a lost
   * connection; `lastError` says why).
   */
  state?: 'connecting' | 'connected' | 'retrying';
  /** Attempts that failed since the last accepted connection, and when the next starts (unix ms) while retrying. */
  failedAttempts?: number;
  nextAttemptAt?: number;
  protocolVersion?: 4 | 5;
  /** Unix ms of the last connection to the broker, and the last error (why an attempt failed or the connection ended) with its time. */
  connectedAt?: number;
  lastError?: string;
  lastErrorAt?: number;
  /** Calls since the gateway started: answered, answered with a tool error, dropped (late, malformed). Absent when not configured. */
  callsAnswered?: number;
  callsFailed?: number;
  callsDropped?: number;
}

declare module './context.js' {
  interface GatewayServices {
    'cloud-link': { status(): CloudLinkStatus };
  }
}
