/**
 * `driverOptions` of a machine read over OPC UA. Every field is optional; the
 * defaults read an OPC 40501 (umati) machine tool anonymously without security.
 */
import { z } from 'zod';

export const SECURITY_MODES = ['None', 'Sign', 'SignAndEncrypt'] as const;
export type SecurityModeName = (typeof SECURITY_MODES)[number];

/** Policies whose asymmetric encryption is RSA-OAEP, so they work on Node 20 without reverting CVE-2023-46809. */
export const SECURITY_POLICIES = ['Basic256Sha256', 'Aes128_Sha256_RsaOaep', 'Aes256_Sha256_RsaPss'] as const;
export type SecurityPolicyName = (typeof SECURITY_POLICIES)[number];

/** Items a machine config may point at an explicit NodeId, for servers that do not follow the model. */
export const NODE_ITEMS = [
  'channelState', 'channelMode', 'feedOverride', 'rapidOverride', 'feedRate', 'spindleOverride', 'spindleSpeed',
  'programName', 'programState', 'partCount', 'partsTotal', 'partsRequired', 'toolNumber',
  'powerOnTime', 'operatingTime', 'cuttingTime', 'cycleTime', 'messages', 'tools',
] as const;
export type NodeItem = (typeof NODE_ITEMS)[number];

/** `ns=<index>;` or `nsu=<namespace URI>;` (optional) followed by `i=`, `s=`, `g=` or `b=`. */
const NODE_ID = /^(?:(?:ns=\d+|nsu=[^;]+);)?[isgb]=.+$/;

const nodeId = (item: NodeItem) =>
  z
    .string({ error: `nodes.${item} must be a NodeId string such as 'ns=2;s=Channel1.State' or 'nsu=urn:vendor;i=42'` })
    .regex(NODE_ID, { error: `nodes.${item} must be a NodeId string such as 'ns=2;s=Channel1.State' or 'nsu=urn:vendor;i=42'` })
    .optional();

const nodesShape = Object.fromEntries(NODE_ITEMS.map((item) => [item, nodeId(item)])) as Record<NodeItem, ReturnType<typeof nodeId>>;

const millis = (field: string, min: number, max: number, fallback: number) =>
  z
    .number({ error: `${field} must be a number of milliseconds` })
    .int({ error: `${field} must be a whole number of milliseconds` })
    .min(min, { error: `${field} must be at least ${min}` })
    .max(max, { error: `${field} must be at most ${max}` })
    .default(fallback);

const severity = (field: string, fallback: number) =>
  z
    .number({ error: `${field} must be an OPC UA severity from 1 to 1000` })
    .int({ error: `${field} must be a whole number from 1 to 1000` })
    .min(1, { error: `${field} must be at least 1` })
    .max(1000, { error: `${field} must be at most 1000` })
    .default(fallback);

const name = (field: string) =>
  z.string({ error: `${field} must be a string` }).trim().min(1, { error: `${field} must not be empty` }).optional();

export const opcuaOptionsSchema = z
  .strictObject({
    /** Path appended to `opc.tcp://<ip>:<port>`, e.g. `/UA/Server`. */
    endpointPath: z
      .string({ error: "endpointPath must be a string starting with '/' (or empty)" })
      .regex(/^(\/.*)?$/, { error: "endpointPath must be empty or start with '/'" })
      .default(''),
    machine: name('machine'),
    channel: name('channel'),
    spindle: name('spindle'),
    securityMode: z.enum(SECURITY_MODES, { error: `securityMode must be one of ${SECURITY_MODES.join(', ')}` }).default('None'),
    securityPolicy: z
      .enum(SECURITY_POLICIES, { error: `securityPolicy must be one of ${SECURITY_POLICIES.join(', ')}` })
      .default('Basic256Sha256'),
    userName: name('userName'),
    acceptUnknownServerCertificate: z.boolean({ error: 'acceptUnknownServerCertificate must be true or false' }).default(true),
    subscription: z.boolean({ error: 'subscription must be true or false' }).default(true),
    publishingIntervalMs: millis('publishingIntervalMs', 50, 60_000, 250),
    connectTimeoutMs: millis('connectTimeoutMs', 100, 60_000, 3_000),
    requestTimeoutMs: millis('requestTimeoutMs', 50, 60_000, 1_000),
    alarmSeverity: severity('alarmSeverity', 500),
    emergencySeverity: severity('emergencySeverity', 1000),
    nodes: z.strictObject(nodesShape, { error: `nodes must be an object whose keys are among ${NODE_ITEMS.join(', ')}` }).default({}),
    /** NodeId of the FileDirectoryType object holding the programs; by default the first one under the machine object. */
    programDirectory: z
      .string({ error: "programDirectory must be a NodeId string such as 'ns=2;s=/FileSystem/Part Program' or 'nsu=urn:vendor;i=42'" })
      .regex(NODE_ID, { error: "programDirectory must be a NodeId string such as 'ns=2;s=/FileSystem/Part Program' or 'nsu=urn:vendor;i=42'" })
      .optional(),
    /** The name program calls and listings give that directory (`dir`); by default `/<its BrowseName>/`. */
    programDir: z
      .string({ error: 'programDir must be a string such as /_N_MPF_DIR/' })
      .min(1, { error: 'programDir must not be empty' })
      .max(1024, { error: 'programDir must be at most 1024 characters' })
      .regex(/^[^\p{Cc}]*$/u, { error: 'programDir must not contain control characters' })
      .transform((dir) => (dir.endsWith('/') ? dir : `${dir}/`))
      .optional(),
    /** Largest piece of a program in one Read or Write call, bytes; the server's MaxByteStringLength lowers it. */
    transferChunkBytes: z
      .number({ error: 'transferChunkBytes must be a number of bytes' })
      .int({ error: 'transferChunkBytes must be a whole number of bytes' })
      .min(256, { error: 'transferChunkBytes must be at least 256' })
      .max(16_777_216, { error: 'transferChunkBytes must be at most 16777216' })
      .default(65_536),
  })
  .refine((o) => o.emergencySeverity >= o.alarmSeverity, {
    error: 'emergencySeverity must be at least alarmSeverity',
    path: ['emergencySeverity'],
  });

/** Parsed OPC UA options (defaults applied). */
export type OpcuaOptions = z.output<typeof opcuaOptionsSchema>;
/** OPC UA options as written in a machine config. */
export type OpcuaOptionsInput = z.input<typeof opcuaOptionsSchema>;
/** NodeId strings by item, after resolution against the server's namespace table. */
export type NodeMap = Partial<Record<NodeItem, string>>;
