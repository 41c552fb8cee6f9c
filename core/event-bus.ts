/**
 * The typed event bus plugins meet on. Listeners run synchronously in
 * registration order; a listener that throws is logged and does not stop the
 * others.
 */
import type { Logger } from 'pino';
import type { GroupConfig, MachineConfig } from '../config/schema.js';

/** Every event and its payload. */
export interface GatewayEvents {
  'machine.saved': { config: MachineConfig; created: boolean };
  'machine.deleted': { machineID: string };
  'group.saved': { config: GroupConfig; created: boolean };
  'group.deleted': { groupID: string };
}

type Listener<K extends keyof GatewayEvents> = (payload: GatewayEvents[K]) => void;

export class EventBus {
  private readonly listeners = new Map<keyof GatewayEvents, Listener<never>[]>();

  constructor(private readonly logger: Logger) {}

  on<K extends keyof GatewayEvents>(event: K, listener: Listener<K>): () => void {
    const list = this.listeners.get(event) ?? [];
    list.push(listener as Listener<never>);
    this.listeners.set(event, list);
    return () => {
      const current = this.listeners.get(event) ?? [];
      this.listeners.set(
        event,
        current.filter((l) => l !== (listener as Listener<never>)),
      );
    };
  }

  emit<K extends keyof GatewayEvents>(event: K, payload: GatewayEvents[K]): void {
    for (const listener of this.listeners.get(event) ?? []) {
      try {
        (listener as Listener<K>)(payload);
      } catch (err) {
        this.logger.error({ err, event }, 'event listener failed');
      }
    }
  }
}
