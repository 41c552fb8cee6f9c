/**
 * The gateway's machines and groups: task classes, the machineID and groupID
 * schemas, and the machine, connection and group schemas. The config file's
 * `machines` and `groups`, the HTTP API's machine and group bodies, and the
 * stored fleet are all parsed by these schemas.
 */
import { z } from 'zod';

export const MACHINE_TASK_CLASSES = ['CNCStatus', 'Count', 'Cycle', 'TimeData', 'ToolLife', 'OEE'] as const;
export type MachineTaskClass = (typeof MACHINE_TASK_CLASSES)[number];

export const MACHINE_TYPES = ['lathe', 'mill', 'machiningCenter', 'turnMill', 'grinder', 'other'] as const;

/** Default sampling interval per task class, milliseconds. */
export const DEFAULT_TASK_INTERVAL_MS: Record<MachineTaskClass, number> = {
  CNCStatus: 1000,
  Count: 5000,
  Cycle: 5000,
  TimeData: 10_000,
  ToolLife: 30_000,
  OEE: 60_000,
};

/** Longest machineID or groupID. */
export const ID_MAX_LENGTH = 64;
/** What a machineID or groupID may be; every interface and MCP tool taking one checks it with the schemas below. */
export const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

const idSchema = (field: string) => {
  const rule = `${field} must be 1-${ID_MAX_LENGTH} characters of letters, digits, '_', '.' or '-', starting with a letter or digit (pattern ${ID_PATTERN.source})`;
  // max first: an over-long value is refused by its length, before the pattern looks at it.
  return z.string().max(ID_MAX_LENGTH, rule).regex(ID_PATTERN, rule);
};

/** A machineID: the one schema for creating a machine and for naming one in any input. */
export const machineIdSchema = idSchema('machineID');
/** A groupID: the one schema for creating a group and for naming one in any input. */
export const groupIdSchema = idSchema('groupID');

const taskSchema = (cls: MachineTaskClass) =>
  z
    .object({
      enabled: z.boolean().default(true),
      intervalMs: z.number().int().min(100).max(86_400_000).default(DEFAULT_TASK_INTERVAL_MS[cls]),
    })
    .strict();

const tasksShape = Object.fromEntries(
  MACHINE_TASK_CLASSES.map((cls) => [cls, taskSchema(cls).default({ enabled: true, intervalMs: DEFAULT_TASK_INTERVAL_MS[cls] })]),
) as { [K in MachineTaskClass]: z.ZodDefault<ReturnType<typeof taskSchema>> };

export const machineTasksSchema = z.object(tasksShape).strict();
export type MachineTasks = z.output<typeof machineTasksSchema>;

export const connectionPolicySchema = z
  .object({
    /** First reconnect delay. */
    backoffBaseMs: z.number().int().min(10).default(1000),
    /** Upper bound of the reconnect delay. */
    backoffMaxMs: z.number().int().min(10).default(30_000),
    /** Failed attempts after which the connection is reported offline rather than backing off. */
    offlineAfterAttempts: z.number().int().min(1).default(3),
    /** Watchdog over a driver's connect(); drivers keep their own, usually shorter, timeouts. */
    connectTimeoutMs: z.number().int().min(10).default(5000),
    /** Watchdog over one task sample. */
    requestTimeoutMs: z.number().int().min(10).default(5000),
    /** Consecutive failed samples after which the connection is treated as lost. */
    failuresBeforeLost: z.number().int().min(1).default(3),
  })
  .strict();

export const machineConfigSchema = z
  .object({
    machineID: machineIdSchema,
    name: z.string().min(1).max(128),
    system: z.string().max(64).default(''),
    model: z.string().max(64).default(''),
    machineType: z.enum(MACHINE_TYPES).default('other'),
    ip: z.string().max(255).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(0),
    isActive: z.boolean().default(true),
    /** Driver scheme, e.g. simulator, opcua, modbus, mqtt, focas. */
    driver: z.string().min(1).default('simulator'),
    /** Options of the driver, checked against the driver's own schema. */
    driverOptions: z.record(z.string(), z.unknown()).default({}),
    /** Controller credential; write-only. */
    password: z.string().max(256).optional(),
    /** File-server credential; write-only. */
    fileServerPassword: z.string().max(256).optional(),
    /** Ideal cycle time in seconds, used by OEE performance. */
    idealCycleTimeSec: z.number().positive().optional(),
    tasks: machineTasksSchema.default(machineTasksSchema.parse({})),
    connection: connectionPolicySchema.default(connectionPolicySchema.parse({})),
  })
  .strict();
export type MachineConfig = z.output<typeof machineConfigSchema>;
export type MachineConfigInput = z.input<typeof machineConfigSchema>;

/** Fields that are accepted on write and never returned. */
export const WRITE_ONLY_MACHINE_FIELDS = ['password', 'fileServerPassword'] as const;

export const GROUP_TASK_CLASSES = ['GroupCount', 'GroupCumulativeTime', 'GroupOEE'] as const;
export type GroupTaskClass = (typeof GROUP_TASK_CLASSES)[number];

/** Default refresh interval per group task class, milliseconds. */
export const DEFAULT_GROUP_TASK_INTERVAL_MS: Record<GroupTaskClass, number> = {
  GroupCount: 10_000,
  GroupCumulativeTime: 30_000,
  GroupOEE: 60_000,
};

const groupTaskSchema = (cls: GroupTaskClass) =>
  z
    .object({
      enabled: z.boolean().default(true),
      intervalMs: z.number().int().min(1000).max(86_400_000).default(DEFAULT_GROUP_TASK_INTERVAL_MS[cls]),
    })
    .strict();

const groupTasksShape = Object.fromEntries(
  GROUP_TASK_CLASSES.map((cls) => [cls, groupTaskSchema(cls).default({ enabled: true, intervalMs: DEFAULT_GROUP_TASK_INTERVAL_MS[cls] })]),
) as { [K in GroupTaskClass]: z.ZodDefault<ReturnType<typeof groupTaskSchema>> };

export const groupTasksSchema = z.object(groupTasksShape).strict();
export type GroupTasks = z.output<typeof groupTasksSchema>;

export const groupConfigSchema = z
  .object({
    groupID: groupIdSchema,
    name: z.string().min(1).max(128),
    isActive: z.boolean().default(true),
    machineIDs: z.array(machineIdSchema).default([]),
    tasks: groupTasksSchema.default(groupTasksSchema.parse({})),
  })
  .strict();
export type GroupConfig = z.output<typeof groupConfigSchema>;
