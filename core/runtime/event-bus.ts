/**
 * The typed event bus plugins meet on. Listeners run synchronously in
 * registration order; a listener that throws is logged and does not stop the
 * others.
 *
 * The bus is generic over its event map, an interface each role declares
 * (the gateway's `GatewayEvents` in core/roles/gateway/events.ts, the
 * program service's `ProgramsEvents` in core/roles/programs/context.ts), so
 * a plugin adds its own events by declaration merging without editing the
 * role's file (docs/adding-a-plugin.md, "Events").
 */
import type { Logger } from 'pino';

/** An event map: event name → payload type. */
export type EventMap = object;

/** The names of an event map's events. */
export type EventName<Events extends EventMap> = keyof Events & string;

export type Listener<Events extends EventMap, K extends EventName<Events>> = (payload: Events[K]) => void;

export class EventBus<Events extends EventMap> {
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
