/**
 * Services plugins contribute to their role's context without core naming
 * them. The registry is typed by a services interface that plugins extend by
 * declaration merging (`GatewayServices` in core/roles/gateway/context.ts for the gateway),
 * so `provide` and `get` check the service's type while core stays unaware
 * of it (docs/architecture.md, "The plugin context").
 *
 * A plugin provides in `register`; a plugin that uses a service lists its
 * provider in `dependsOn`, so the service is there when it registers.
 */

/** The longest service name accepted; names appear in errors. */
export const SERVICE_NAME_MAX_LENGTH = 64;
const SERVICE_NAME = /^[a-z][a-z0-9]*(?:[.-][a-z0-9]+)*$/i;

export class ServiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ServiceError';
  }
}

/** The services of one role, by name. */
export class ServiceRegistry<Services extends object> {
  private readonly services = new Map<string, unknown>();

  /** `role` names the registry in errors (e.g. `gateway`). */
  constructor(private readonly role: string) {}

  /** Adds a service under `name`; a name is provided once. */
  provide<K extends keyof Services & string>(name: K, service: Services[K]): void {
    if (typeof name !== 'string' || name.length > SERVICE_NAME_MAX_LENGTH || !SERVICE_NAME.test(name)) {
      const shown = typeof name === 'string' ? JSON.stringify(name.slice(0, SERVICE_NAME_MAX_LENGTH)) : typeof name;
      throw new ServiceError(`${this.role} service name ${shown} is not accepted; accepted: 1-${SERVICE_NAME_MAX_LENGTH} letters and digits, words joined by '.' or '-'`);
    }
    if (this.services.has(name)) throw new ServiceError(`${this.role} service '${name}' is provided twice`);
    this.services.set(name, service);
  }

  /** The service under `name`; throws naming the provided ones when it is missing. */
  get<K extends keyof Services & string>(name: K): Services[K] {
    if (!this.services.has(name)) {
      throw new ServiceError(
        `${this.role} service '${String(name).slice(0, SERVICE_NAME_MAX_LENGTH)}' is not provided (provided: ${this.names().join(', ') || 'none'}); list the plugin that provides it in dependsOn`,
      );
    }
    return this.services.get(name) as Services[K];
  }

  /** The service under `name`, or undefined: for optional collaborators. */
  find<K extends keyof Services & string>(name: K): Services[K] | undefined {
    return this.services.get(name) as Services[K] | undefined;
  }

  /** The names provided so far, in the order they were provided. */
  names(): string[] {
    return [...this.services.keys()];
  }
}
