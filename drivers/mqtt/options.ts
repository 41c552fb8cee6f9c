/**
 * `driverOptions` of a machine using the `mqtt` scheme: the broker
 * connection, presence (availability topic, inactivity timeout), and the
 * topic mapping from payloads to item families.
 */
import { z } from 'zod';
import { DEFAULT_AVAILABILITY_TOPIC, DEFAULT_TOPICS } from './default-mapping.js';
import { LIST_ITEMS, LIST_ITEM_NAMES, SCALAR_ITEMS, SCALAR_ITEM_NAMES, mapAndCoerce, type ItemKind, type ListItem, type ScalarItem } from './items.js';
import { topicFilterProblem } from './topics.js';

const millis = (field: string, min: number, max: number) =>
  z
    .number({ error: `${field} must be a number of milliseconds` })
    .int({ error: `${field} must be a whole number of milliseconds` })
    .min(min, { error: `${field} must be at least ${min}` })
    .max(max, { error: `${field} must be at most ${max}` });

const text = (field: string) => z.string({ error: `${field} must be a string` });

const mapValue = z.union([z.string(), z.number(), z.boolean()], { error: 'map values must be a string, number or boolean' });

const scalarSpec = z
  .union(
    [
      z.string(),
      z.strictObject({
        path: text('path').default(''),
        map: z.record(z.string(), mapValue, { error: 'map must be an object of payload word → value' }).optional(),
        scale: z.number({ error: 'scale must be a number' }).refine(Number.isFinite, { error: 'scale must be finite' }).optional(),
      }),
    ],
    { error: "an item must be a payload path ('' for the whole payload) or { path, map, scale }" },
  )
  .transform((spec) => (typeof spec === 'string' ? { path: spec } : spec));

const listSpec = z
  .union(
    [
      z.string(),
      z.strictObject({
        path: text('path').default(''),
        fields: z.record(z.string(), z.string(), { error: 'fields must be an object of element field → path in the element' }).optional(),
        map: z.record(z.string(), z.record(z.string(), mapValue), { error: 'map must be an object of element field → { word: value }' }).optional(),
      }),
    ],
    { error: "a list must be a payload path to a JSON array ('' for the whole payload) or { path, fields, map }" },
  )
  .transform((spec) => (typeof spec === 'string' ? { path: spec } : spec));

const topicFilter = (field: string) =>
  text(field).superRefine((filter, ctx) => {
    const problem = topicFilterProblem(filter);
    if (problem) ctx.addIssue({ code: 'custom', message: `${field} ${problem} (an MQTT topic filter with optional +, # and {machineID})` });
  });

const topicSchema = z
  .strictObject({
    topic: topicFilter('topic'),
    items: z.record(z.string(), scalarSpec, { error: 'items must be an object of item → payload path or { path, map, scale }' }).default({}),
    lists: z.record(z.string(), listSpec, { error: 'lists must be an object of list family → payload path or { path, fields, map }' }).default({}),
    /** Values of this topic older than this are stale; 0 never. Defaults to the machine's inactivityTimeoutMs. */
    inactivityTimeoutMs: millis('inactivityTimeoutMs', 0, 86_400_000).optional(),
  })
  .superRefine((entry, ctx) => {
    if (Object.keys(entry.items).length + Object.keys(entry.lists).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['items'], input: entry.items, message: 'a topic must map at least one entry of items or lists' });
    }
    for (const [key, spec] of Object.entries(entry.items)) {
      if (!(key in SCALAR_ITEMS)) {
        ctx.addIssue({ code: 'custom', path: ['items', key], input: key, message: `unknown item '${key}'; accepted: ${SCALAR_ITEM_NAMES.join(', ')}` });
        continue;
      }
      const kind = SCALAR_ITEMS[key as ScalarItem];
      for (const [word, value] of Object.entries(spec.map ?? {})) {
        const coerced = mapAndCoerce(kind, value, undefined);
        if (!coerced.ok) ctx.addIssue({ code: 'custom', path: ['items', key, 'map', word], input: value, message: `map value ${coerced.problem}` });
      }
      if (spec.scale !== undefined && kind.type !== 'number') {
        ctx.addIssue({ code: 'custom', path: ['items', key, 'scale'], input: spec.scale, message: `scale applies to number items only; ${key} is ${kind.type}` });
      }
    }
    for (const [key, spec] of Object.entries(entry.lists)) {
      if (!(key in LIST_ITEMS)) {
        ctx.addIssue({ code: 'custom', path: ['lists', key], input: key, message: `unknown list '${key}'; accepted: ${LIST_ITEM_NAMES.join(', ')}` });
        continue;
      }
      const elementFields = LIST_ITEMS[key as ListItem] as Record<string, { kind: ItemKind }>;
      const accepted = Object.keys(elementFields).join(', ');
      for (const [where, fields] of [['fields', spec.fields], ['map', spec.map]] as const) {
        for (const field of Object.keys(fields ?? {})) {
          if (!(field in elementFields)) {
            ctx.addIssue({ code: 'custom', path: ['lists', key, where, field], input: field, message: `unknown element field '${field}'; accepted: ${accepted}` });
          }
        }
      }
      for (const [field, words] of Object.entries(spec.map ?? {})) {
        const element = elementFields[field];
        if (!element) continue;
        for (const [word, value] of Object.entries(words)) {
          const coerced = mapAndCoerce(element.kind, value, undefined);
          if (!coerced.ok) ctx.addIssue({ code: 'custom', path: ['lists', key, 'map', field, word], input: value, message: `map value ${coerced.problem}` });
        }
      }
    }
  });

const availabilitySchema = z.strictObject({
  topic: topicFilter('availability.topic').default(DEFAULT_AVAILABILITY_TOPIC),
  /** Path of the presence word in a JSON payload; '' for a plain payload. */
  path: text('availability.path').default(''),
  online: text('availability.online').min(1, { error: 'availability.online must not be empty' }).default('online'),
  offline: text('availability.offline').min(1, { error: 'availability.offline must not be empty' }).default('offline'),
});

const tlsSchema = z
  .strictObject({
    ca: text('tls.ca').min(1, { error: 'tls.ca must be a file path' }).optional(),
    cert: text('tls.cert').min(1, { error: 'tls.cert must be a file path' }).optional(),
    key: text('tls.key').min(1, { error: 'tls.key must be a file path' }).optional(),
    rejectUnauthorized: z.boolean({ error: 'tls.rejectUnauthorized must be true or false' }).default(true),
  })
  .superRefine((tls, ctx) => {
    if ((tls.cert === undefined) !== (tls.key === undefined)) {
      ctx.addIssue({ code: 'custom', path: [tls.cert === undefined ? 'cert' : 'key'], input: undefined, message: 'tls.cert and tls.key must be given together' });
    }
  });

const brokerUrl = text('url').superRefine((url, ctx) => {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    ctx.addIssue({ code: 'custom', message: 'url must be a URL such as mqtt://broker:1883 or mqtts://broker:8883' });
    return;
  }
  if (parsed.protocol !== 'mqtt:' && parsed.protocol !== 'mqtts:') ctx.addIssue({ code: 'custom', message: 'url must start with mqtt:// or mqtts://' });
  if (parsed.username || parsed.password) {
    parsed.username = parsed.username ? '(hidden)' : '';
    parsed.password = '';
    // The input is shown redacted: a password typed into the URL must not come back in an error.
    ctx.addIssue({ code: 'custom', input: parsed.toString(), message: "url must not carry credentials; set username here and the password in the machine's password field" });
  }
});

/** `driverOptions` of a machine using the `mqtt` scheme. */
export const mqttOptionsSchema = z
  .strictObject({
    /** Broker URL; defaults to mqtt://<ip>:<port> (mqtts:// when tls is set; port 0 means 1883, or 8883 with tls). */
    url: brokerUrl.optional(),
    protocolVersion: z.union([z.literal(5), z.literal(4)], { error: 'protocolVersion must be 4 (MQTT 3.1.1) or 5 (MQTT 5)' }).default(4),
    clientId: text('clientId').min(1, { error: 'clientId must not be empty' }).max(128, { error: 'clientId must be at most 128 characters' }).optional(),
    username: text('username').min(1, { error: 'username must not be empty' }).optional(),
    tls: tlsSchema.optional(),
    connectTimeoutMs: millis('connectTimeoutMs', 100, 60_000).default(3000),
    requestTimeoutMs: millis('requestTimeoutMs', 10, 60_000).default(1000),
    keepaliveSec: z
      .number({ error: 'keepaliveSec must be a number of seconds' })
      .int({ error: 'keepaliveSec must be a whole number of seconds' })
      .min(0, { error: 'keepaliveSec must be 0 (off) or more' })
      .max(3600, { error: 'keepaliveSec must be at most 3600' })
      .default(10),
    qos: z.union([z.literal(0), z.literal(1), z.literal(2)], { error: 'qos must be 0, 1 or 2' }).default(0),
    inactivityTimeoutMs: millis('inactivityTimeoutMs', 0, 86_400_000).default(10_000),
    availability: z
      .union([z.literal(false), availabilitySchema], { error: 'availability must be false or { topic, path, online, offline }' })
      .default({ topic: DEFAULT_AVAILABILITY_TOPIC, path: '', online: 'online', offline: 'offline' }),
    topics: z.array(topicSchema, { error: 'topics must be a list of { topic, items, lists }' }).min(1, { error: 'topics must list at least one topic' }).optional(),
  })
  .superRefine((options, ctx) => {
    if (options.tls && options.url && !options.url.startsWith('mqtts:')) {
      ctx.addIssue({ code: 'custom', path: ['url'], input: options.url, message: 'url must start with mqtts:// when tls is set' });
    }
    const mappedBy = new Map<string, number>();
    (options.topics ?? []).forEach((entry, i) => {
      for (const key of [...Object.keys(entry.items), ...Object.keys(entry.lists)]) {
        const earlier = mappedBy.get(key);
        if (earlier !== undefined) {
          ctx.addIssue({ code: 'custom', path: ['topics', i, 'topic'], input: entry.topic, message: `${key} is already mapped by topics[${earlier}]; map each item once` });
        }
        mappedBy.set(key, i);
      }
    });
  })
  .transform((options) => ({ ...options, topics: options.topics ?? defaultTopics() }));

/** Parsed mqtt options (defaults applied). */
export type MqttOptions = z.output<typeof mqttOptionsSchema>;
/** mqtt options as written in a machine config. */
export type MqttOptionsInput = z.input<typeof mqttOptionsSchema>;
/** One parsed topic entry. */
export type MqttTopic = z.output<typeof topicSchema>;
/** One topic entry as written in a machine config. */
export type MqttTopicInput = z.input<typeof topicSchema>;
/** Parsed availability settings. */
export type MqttAvailability = z.output<typeof availabilitySchema>;

let parsedDefaults: MqttTopic[] | undefined;
function defaultTopics(): MqttTopic[] {
  parsedDefaults ??= z.array(topicSchema).parse(DEFAULT_TOPICS);
  return parsedDefaults;
}
