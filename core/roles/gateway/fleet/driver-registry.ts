/**
 * Driver factories by scheme. A machine's `driverOptions` are parsed by its
 * driver's own schema here, so a bad option is reported with its path.
 */
import type { MachineConfig } from '../machine-config.js';
import type { DriverClient, DriverDeps, DriverFactory, RegisteredDriver } from '../../../driver-seam/driver.js';
import { GatewayError } from '../../../interfaces/errors.js';
import { describeIssues } from '../../../interfaces/schema-errors.js';

export class DriverRegistry {
  private readonly factories = new Map<string, DriverFactory<unknown>>();

  constructor(factories: readonly RegisteredDriver[]) {
    for (const f of factories) {
      if (this.factories.has(f.scheme)) throw new Error(`driver scheme '${f.scheme}' registered twice`);
      this.factories.set(f.scheme, f as unknown as DriverFactory<unknown>);
    }
  }

  schemes(): string[] {
    return [...this.factories.keys()];
  }

  private factory(scheme: string): DriverFactory<unknown> {
    const f = this.factories.get(scheme);
    if (!f) {
      throw new GatewayError('INVALID_PARAMETER', `driver: found '${scheme}'; accepted: ${this.schemes().join(', ')}`);
    }
    return f;
  }

  /** Checks a machine's driver and options; returns problems as `path: message` lines (empty when valid). */
  validate(config: Pick<MachineConfig, 'driver' | 'driverOptions'>): string[] {
    const f = this.factories.get(config.driver);
    if (!f) return [`driver: found '${config.driver}'; accepted: ${this.schemes().join(', ')}`];
    const parsed = f.configSchema.safeParse(config.driverOptions, { reportInput: true });
    if (parsed.success) return [];
    return describeIssues(parsed.error.issues, config.driverOptions).map((line) => `driverOptions.${line}`);
  }

  create(config: MachineConfig, deps: DriverDeps): DriverClient {
    const f = this.factory(config.driver);
    const driverOptions = f.configSchema.parse(config.driverOptions);
    return f.create(
      {
        machineID: config.machineID,
        ip: config.ip,
        port: config.port,
        ...(config.password !== undefined ? { password: config.password } : {}),
        driverOptions,
      },
      deps,
    );
  }
}
