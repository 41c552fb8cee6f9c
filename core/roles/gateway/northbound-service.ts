/**
 * The service `northbound` the northbound plugin provides: its targets'
 * status for gateway-info (the system plugin) without an import of the
 * plugin.
 */
import type { NorthboundStatus } from './northbound-status.js';

declare module './context.js' {
  interface GatewayServices {
    northbound: { status(): Promise<NorthboundStatus> };
  }
}
