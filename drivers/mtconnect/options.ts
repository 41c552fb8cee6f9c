/**
 * `driverOptions` of a machine using the `mtconnect` scheme: where the
 * machine's MTConnect data comes from (an SHDR adapter, or an agent and one
 * of its devices), how its data item names map to MTConnect types when no
 * probe describes them, and the bounds on what a peer may send. A Devices
 * file is read and checked here, so a mistake in it is reported at start
 * with its path.
 */
import { readFileSync, statSync } from 'node:fs';
import { z } from 'zod';
import { CATEGORIES } from './device-model.js';
import type { DeviceModel } from './device-model.js';
import { parseDevices, pickDevice } from './probe.js';
import { XmlProblem } from './xml-reader.js';

/** The port an SHDR adapter listens on unless told otherwise. */
export const DEFAULT_ADAPTER_PORT = 7878;
/** The port an MTConnect agent listens on unless told otherwise. */
export const DEFAULT_AGENT_PORT = 5000;
/** The largest Devices file read. */
const MAX_DEVICES_FILE_BYTES = 4 * 1024 * 1024;

const millis = (field: string, min: number, max: number) =>
  z
    .number({ error: `${field} must be a number of milliseconds` })
    .int({ error: `${field} must be a whole number of milliseconds` })
    .min(min, { error: `${field} must be at least ${min}` })
    .max(max, { error: `${field} must be at most ${max}` });

const count = (field: string, min: number, max: number) =>
  z
    .number({ error: `${field} must be a number` })
    .int({ error: `${field} must be a whole number` })
    .min(min, { error: `${field} must be at least ${min}` })
    .max(max, { error: `${field} must be at most ${max}` });

const MTC_NAME = /^[A-Z][A-Z0-9_]*$/;
const typeName = (field: string) => z.string({ error: `${field} must be a string` }).regex(MTC_NAME, { error: `${field} must be an MTConnect type in UPPER_SNAKE case, e.g. EXECUTION` });

const nameEntry = z.union(
  [
    z.string().regex(/^[A-Z][A-Z0-9_]*(:[A-Z][A-Z0-9_]*)?$/, { error: 'a data item must be an MTConnect TYPE or TYPE:SUBTYPE, e.g. EXECUTION or PATH_FEEDRATE:ACTUAL' }).transform((text) => {
      const [type, subType] = text.split(':') as [string, string | undefined];
      return { type, ...(subType ? { subType } : {}) };
    }),
    z.strictObject({
      type: typeName('type'),
      subType: typeName('subType').optional(),
      category: z.enum(CATEGORIES, { error: `category must be one of ${CATEGORIES.join(', ')}` }).optional(),
      component: z.string({ error: 'component must be a string' }).min(1).max(64).optional(),
      units: z.string({ error: 'units must be a string' }).max(64).optional(),
    }),
  ],
  { error: "a data item must be 'TYPE', 'TYPE:SUBTYPE' or { type, subType, category, component, units }" },
);

const adapterAddress = z.string({ error: 'adapter must be "host:port"' }).superRefine((text, ctx) => {
  const parsed = parseAdapterAddress(text);
  if (typeof parsed === 'string') ctx.addIssue({ code: 'custom', message: parsed });
});

const agentUrl = z.string({ error: 'agentUrl must be a URL such as http://host:5000' }).superRefine((text, ctx) => {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'agentUrl must be a URL such as http://host:5000' });
    return;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') ctx.addIssue({ code: 'custom', message: 'agentUrl must start with http:// or https://' });
  if (url.username || url.password) ctx.addIssue({ code: 'custom', input: '(hidden)', message: 'agentUrl must not carry credentials' });
  if (url.search || url.hash) ctx.addIssue({ code: 'custom', message: 'agentUrl must not have a query or fragment; name the device in driverOptions.device' });
});

const agentSettings = z.strictObject({
  /** stream: one long /sample request the agent writes to (multipart/x-mixed-replace); poll: /sample every intervalMs. */
  mode: z.enum(['stream', 'poll'], { error: 'agent.mode must be stream or poll' }).default('stream'),
  intervalMs: millis('agent.intervalMs', 10, 60_000).default(500),
  heartbeatMs: millis('agent.heartbeatMs', 100, 600_000).default(10_000),
  count: count('agent.count', 1, 10_000).default(1_000),
});

/** `driverOptions` of a machine using the `mtconnect` scheme. */
export const mtconnectOptionsSchema = z
  .strictObject({
    adapter: adapterAddress.optional(),
    agentUrl: agentUrl.optional(),
    device: z.string({ error: 'device must be a device name or uuid' }).min(1, { error: 'device must not be empty' }).max(256).optional(),
    devicesFile: z.string({ error: 'devicesFile must be a file path' }).min(1, { error: 'devicesFile must be a file path' }).optional(),
    dataItems: z.record(z.string().min(1).max(256), nameEntry, { error: 'dataItems must be an object of SHDR name → TYPE or { type, subType, … }' }).optional(),
    commonNames: z.boolean({ error: 'commonNames must be true or false' }).default(true),
    agent: agentSettings.optional(),
    connectTimeoutMs: millis('connectTimeoutMs', 100, 60_000).default(3_000),
    requestTimeoutMs: millis('requestTimeoutMs', 10, 60_000).default(2_000),
    legacyTimeoutMs: millis('legacyTimeoutMs', 100, 3_600_000).default(60_000),
    heartbeatMs: millis('heartbeatMs', 10, 1_800_000).optional(),
    maxLineBytes: count('maxLineBytes', 1_024, 16 * 1024 * 1024).default(256 * 1024),
    maxFieldsPerLine: count('maxFieldsPerLine', 8, 100_000).default(4_096),
    maxAssetBytes: count('maxAssetBytes', 1_024, 64 * 1024 * 1024).default(1024 * 1024),
    maxDocumentBytes: count('maxDocumentBytes', 4_096, 256 * 1024 * 1024).default(16 * 1024 * 1024),
    maxAssets: count('maxAssets', 0, 100_000).default(1_000),
    maxClockAheadMs: millis('maxClockAheadMs', 0, 86_400_000).default(60_000),
  })
  .superRefine((o, ctx) => {
    if (o.adapter !== undefined && o.agentUrl !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['agentUrl'], input: o.agentUrl, message: 'give adapter (an SHDR adapter) or agentUrl (an MTConnect agent), not both' });
    }
    if (o.adapter !== undefined && o.agent !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['agent'], input: o.agent, message: 'agent settings apply to an agent (agentUrl, or the machine\'s ip and port), not to an adapter' });
    }
    if (o.agentUrl !== undefined || o.agent !== undefined) {
      for (const key of ['devicesFile', 'dataItems', 'heartbeatMs'] as const) {
        if (o[key] !== undefined) {
          ctx.addIssue({ code: 'custom', path: [key], input: o[key], message: `${key} applies to an adapter; an agent's /probe describes its data items` });
        }
      }
    }
  })
  .transform((o, ctx) => {
    if (o.devicesFile === undefined) return { ...o, devicesModel: undefined as DeviceModel | undefined };
    try {
      return { ...o, devicesModel: readDevicesFile(o.devicesFile, o.device) };
    } catch (error) {
      ctx.issues.push({ code: 'custom', path: ['devicesFile'], input: o.devicesFile, message: error instanceof Error ? error.message : String(error) });
      return z.NEVER;
    }
  });

/** Parsed mtconnect options (defaults applied, a Devices file read). */
export type MtconnectOptions = z.output<typeof mtconnectOptionsSchema>;
/** mtconnect options as written in a machine config. */
export type MtconnectOptionsInput = z.input<typeof mtconnectOptionsSchema>;
/** The agent settings with their defaults. */
export type AgentSettings = z.output<typeof agentSettings>;

/** Default agent settings, as the reference agent's agent adapter uses them. */
export const DEFAULT_AGENT_SETTINGS: AgentSettings = agentSettings.parse({});

/** `host:port`, `host` (port 7878) or `[v6]:port` → host and port; a string says what is wrong. */
export function parseAdapterAddress(text: string): { host: string; port: number } | string {
  const match = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d+))?$/.exec(text.trim());
  if (!match) return 'adapter must be "host:port" (or "host" for port 7878, "[v6 address]:port" for IPv6)';
  const host = (match[1] ?? match[2]) as string;
  const port = match[3] === undefined ? DEFAULT_ADAPTER_PORT : Number(match[3]);
  if (!(port >= 1 && port <= 65_535)) return `adapter port must be 1-65535; found ${match[3]}`;
  return { host, port };
}

function readDevicesFile(path: string, device: string | undefined): DeviceModel {
  let text: string;
  try {
    const size = statSync(path).size;
    if (size > MAX_DEVICES_FILE_BYTES) throw new XmlProblem(`is ${size} bytes, larger than ${MAX_DEVICES_FILE_BYTES}`);
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (error instanceof XmlProblem) throw new Error(`devicesFile '${path}' ${error.message}`, { cause: error });
    throw new Error(`cannot read devicesFile '${path}' (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`, { cause: error });
  }
  try {
    return pickDevice(parseDevices(text), device, `devicesFile '${path}'`);
  } catch (error) {
    if (error instanceof XmlProblem) throw new Error(error.message.startsWith('devicesFile') ? error.message : `devicesFile '${path}': ${error.message}`, { cause: error });
    throw error;
  }
}
