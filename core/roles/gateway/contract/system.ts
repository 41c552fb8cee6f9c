/** The gateway's system interfaces: liveness, what it is and runs on, its clock, services and resources, and the interface error log (docs/system-interfaces.md). */
import { z } from 'zod';
import { defineEntry } from '../../../interfaces/registry.js';
import { timeParamSchema } from '../../../interfaces/time-params.js';
import { errorLogOutput } from '../api-outputs.js';
import type { NorthboundStatus } from '../northbound-status.js';
import { cloudLinkStatusSchema } from './security.js';

/** Entries the interface error log keeps: /api/log/error reads at most these, the newest. */
export const ERROR_LOG_CAPACITY = 5000;

const noInput = z.object({}).strict();

/** gateway-info's `northbound`: each target's public state, never a password (the type the console reads: northbound-status.ts). */
const northboundStatusSchema = z.strictObject({
  targets: z.array(
    z.strictObject({
      name: z.string(),
      description: z.string().optional(),
      format: z.enum(['uns', 'sparkplug']),
      brokerUrl: z.string(),
      topicRoot: z.string(),
      edgeNodeId: z.string().optional(),
      enabled: z.boolean(),
      state: z.enum(['disabled', 'connecting', 'connected', 'retrying', 'stopped']),
      failedAttempts: z.number(),
      nextAttemptAt: z.number().optional(),
      cursor: z.number(),
      committedThrough: z.number(),
      backlogRows: z.number(),
      backlogSeconds: z.number(),
      lostRows: z.number(),
      oversizeRows: z.number(),
      published: z.number(),
      inFlight: z.number(),
      maxInFlight: z.number(),
      connectedAt: z.number().optional(),
      lastError: z.string().optional(),
      lastErrorAt: z.number().optional(),
    }),
  ),
}) satisfies z.ZodType<NorthboundStatus>;
const figures = (what: string) => z.looseObject({}).describe(what);

export const SYSTEM = {
  health: defineEntry({
    path: '/api/health',
    method: 'GET',
    summary: 'Liveness: the gateway is up, with its version, uptime and history writer figures.',
    tags: ['system'],
    permission: null,
    input: noInput,
    output: z.strictObject({
      status: z.literal('ok'),
      version: z.string(),
      uptimeSec: z.number().int(),
      machines: z.number().int(),
      history: z.strictObject({
        rowsWritten: z.number().int(),
        flushes: z.number().int(),
        pending: z.number().int(),
        inFlight: z.number().int(),
        droppedRows: z.number().int(),
        failedFlushes: z.number().int(),
        lastSeq: z.number().int(),
      }),
    }),
    errors: [],
  }),
  info: defineEntry({
    path: '/api/system/info',
    method: 'GET',
    summary: 'Core information: product, version, Node.js version, platform, uptime, started plugins, driver schemes, machine and group counts.',
    tags: ['system'],
    input: noInput,
    output: z.strictObject({
      productName: z.string(),
      version: z.string(),
      nodeVersion: z.string(),
      platform: z.string(),
      arch: z.string(),
      osRelease: z.string(),
      uptimeMs: z.number(),
      startedPlugins: z.array(z.string()),
      driverSchemes: z.array(z.string()),
      machineCount: z.number().int(),
      activeMachineCount: z.number().int(),
      groupCount: z.number().int(),
    }),
    errors: [],
  }),
  productDetails: defineEntry({
    path: '/api/misc/product-details',
    method: 'GET',
    summary: 'Public product details: product name, version, license and the API versions served. Needs no credentials.',
    tags: ['system'],
    // Public, and exempt from the IP white list (GW-82): clients read it to discover what they talk to.
    permission: null,
    input: noInput,
    output: z.strictObject({
      productName: z.string(),
      version: z.string(),
      vendor: z.string().nullable(),
      homepage: z.string().nullable(),
      license: z.string(),
      apiVersions: z.array(z.strictObject({ api: z.string(), version: z.string(), basePath: z.string() })),
    }),
    errors: [],
  }),
  licenseInfo: defineEntry({
    path: '/api/system/license-info',
    method: 'GET',
    summary: 'The license: open source (Apache-2.0), community edition, no machine limit, no expiry.',
    tags: ['system'],
    input: noInput,
    output: z.strictObject({ license: z.string(), edition: z.string(), machineLimit: z.number().int().nullable(), expires: z.string().nullable(), features: z.array(z.string()) }),
    errors: [],
  }),
  timeZone: defineEntry({
    path: '/api/system/time-zone',
    method: 'GET',
    summary: 'The gateway clock (unix ms and ISO-8601 in the gateway zone), its IANA time zone, the UTC offset now and whether DST is in effect.',
    tags: ['system'],
    input: noInput,
    output: z.strictObject({
      nowMs: z.number(),
      now: z.string(),
      timeZone: z.string(),
      utcOffsetMinutes: z.number(),
      utcOffset: z.string(),
      standardUtcOffsetMinutes: z.number(),
      dstInEffect: z.boolean(),
    }),
    errors: [],
  }),
  gatewayInfo: defineEntry({
    path: '/api/system/gateway-info',
    method: 'GET',
    summary: 'The gateway identity: name, alias, stable gatewayID, version, start time, cloud link status and the northbound targets (state, cursor, backlog, last error). Never includes an access token or a password.',
    tags: ['system'],
    input: noInput,
    output: z.strictObject({
      name: z.string(),
      alias: z.string(),
      gatewayID: z.string(),
      version: z.string(),
      startedAtMs: z.number(),
      startedAt: z.string(),
      cloud: cloudLinkStatusSchema,
      northbound: northboundStatusSchema,
    }),
    errors: [],
  }),
  serviceStatus: defineEntry({
    path: '/api/system/service-status',
    method: 'GET',
    summary: 'Each service with its status and queue: HTTP, the fleet (actors by connection state), the history writer and the database files.',
    tags: ['system'],
    input: noInput,
    output: z.strictObject({
      http: figures('the HTTP server: its status and requests in flight'),
      fleet: figures('machine actors by connection state'),
      historyWriter: figures('the history writer: its status, queue and flushes'),
      database: figures('the database files and their sizes'),
    }),
    errors: [],
  }),
  hardwareResources: defineEntry({
    path: '/api/system/hardware-resources',
    method: 'GET',
    summary: 'CPU count, model and load, process CPU and memory, system memory, the data dir disk, and the event-loop delay.',
    tags: ['system'],
    input: noInput,
    output: z.strictObject({
      cpu: figures('count, model and load averages'),
      memory: z.strictObject({ totalBytes: z.number(), freeBytes: z.number() }),
      process: figures('the process’s CPU time and memory'),
      disk: z.strictObject({ totalBytes: z.number().nullable(), freeBytes: z.number().nullable(), availableBytes: z.number().nullable() }).describe('the data directory’s file system; null figures when it could not be read'),
      eventLoopDelay: z.strictObject({
        samples: z.number().int().describe('samples taken since the monitor started'),
        p50Ms: z.number().nullable(),
        p99Ms: z.number().nullable(),
        maxMs: z.number().nullable(),
        meanMs: z.number().nullable(),
        resolutionMs: z.number(),
      }),
    }),
    errors: [],
  }),
  networkAdapters: defineEntry({
    path: '/api/system/network-adapters',
    method: 'GET',
    summary: "The host's network adapters: name, MAC and each address with its family, CIDR and whether it is internal.",
    tags: ['system'],
    input: noInput,
    output: z.array(
      z.strictObject({
        name: z.string(),
        mac: z.string().nullable(),
        addresses: z.array(z.strictObject({ family: z.string(), address: z.string(), cidr: z.string().nullable(), internal: z.boolean() })),
      }),
    ),
    errors: [],
  }),
  errorLog: defineEntry({
    path: '/api/log/error',
    method: 'GET',
    summary: 'The interface error log: failed calls with time, path, errorCode, message, user and source IP. `limit` keeps the most recent rows.',
    tags: ['system'],
    input: z
      .object({
        start: timeParamSchema.optional(),
        end: timeParamSchema.optional(),
        limit: z.coerce.number().int().min(0).max(ERROR_LOG_CAPACITY).default(200).describe('most recent rows to return (default 200; 0 = all in the window)'),
      })
      .strict(),
    output: errorLogOutput,
    errors: [],
  }),
};
