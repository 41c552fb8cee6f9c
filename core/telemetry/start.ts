/**
 * Starts tracing for a process when, and only when, it is configured
 * (core/telemetry/settings.ts): otherwise nothing of the SDK is imported
 * and the API stays a no-op (core/telemetry/tracing.ts).
 */
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { StartedSdk } from './sdk.js';
import { resolveTelemetry, type TelemetrySection, type TelemetrySettings } from './settings.js';

/** The tracing of a process: `on` says whether it runs; `stop` flushes and ends it (nothing when off). */
export interface ProcessTelemetry {
  on: boolean;
  settings: TelemetrySettings | undefined;
  stop(): Promise<void>;
}

const OFF: ProcessTelemetry = { on: false, settings: undefined, stop: async () => undefined };

/** How the SDK is loaded: the lazy import, replaced in tests. */
export type SdkLoader = () => Promise<{ startSdk(settings: TelemetrySettings, processor?: SpanProcessor): Promise<StartedSdk> }>;

const loadSdk: SdkLoader = () => import('./sdk.js');

/**
 * Resolves the settings (a mistake in a variable throws ConfigError naming
 * it) and, when tracing is configured, loads and starts the SDK for the
 * `roles` this process runs.
 */
export async function startTelemetry(
  section: TelemetrySection | undefined,
  env: NodeJS.ProcessEnv,
  roles: readonly string[],
  options: { load?: SdkLoader; processor?: SpanProcessor } = {},
): Promise<ProcessTelemetry> {
  const settings = resolveTelemetry(section, env, roles);
  if (!settings) return OFF;
  const sdk = await (options.load ?? loadSdk)();
  const started = await sdk.startSdk(settings, options.processor);
  return { on: true, settings, stop: () => started.shutdown() };
}
