/**
 * The typed event bus plugins meet on. Listeners run synchronously in
 * registration order; a listener that throws is logged and does not stop the
 * others.
 *
 * The bus is generic over its event map. The gateway's map, `GatewayEvents`,
 * is an interface, so a plugin adds its own events by declaration merging
 * without editing this file (docs/adding-a-plugin.md, "Events"):
 *
 * ```ts
 * declare module '../../core/event-bus.js' {
 *   interface GatewayEvents {
 *     'note.added': { machineID: string; text: string };
 *   }
 * }
 * ```
 */
import type { Logger } from 'pino';
import type { GroupConfig, MachineConfig } from './roles/gateway/machine-config.js';

/** Every event of the gateway and its payload; plugins add theirs by declaration merging. */
export interface GatewayEvents {
  'machine.saved': { config: MachineConfig; created: boolean };
  'machine.deleted': { machineID: string };
  'group.saved': { config: GroupConfig; created: boolean };
  'group.deleted': { groupID: string };
}

/** An event map: event name → payload type. */
export type EventMap = object;

/** The names of an event map's events. */
export type EventName<Events extends EventMap> = keyof Events & string;

export type Listener<Events extends EventMap, K extends EventName<Events>> = (payload: Events[K]) => void;

export class EventBus<Events extends EventMap = GatewayEvents> {
  private readonly listeners = new Map<string, ((payload: never) => void)[]>();

  constructor(private readonly logger: Logger) {}

  /** Listens to `event`; returns a function that stops listening. */
  on<K extends EventName<Events>>(event: K, listener: Listener<Events, K>): () => void {
    const list = this.listeners.get(event) ?? [];
    list.push(listener as (payload: never) => void);
    this.listeners.set(event, list);
    return () => {
      const current = this.listeners.get(event) ?? [];
      this.listeners.set(
        event,
        current.filter((l) => l !== (listener as (payload: never) => void)),
      );
    };
  }

  /** Calls every listener of `event` in registration order. */
  emit<K extends EventName<Events>>(event: K, payload: Events[K]): void {
    for (const listener of this.listeners.get(event) ?? []) {
      try {
        (listener as Listener<Events, K>)(payload);
      } catch (err) {
        this.logger.error({ err, event }, 'event listener failed');
      }
    }
  }

  /** How many listeners `event` has (for diagnostics and tests). */
  listenerCount(event: EventName<Events>): number {
    return this.listeners.get(event)?.length ?? 0;
  }
}
