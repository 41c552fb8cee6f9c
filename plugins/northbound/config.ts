/**
 * The northbound plugin's part of the configuration: the optional
 * `northbound` section, a list of targets (the plant's MQTT brokers) and the
 * ISA-95 levels the default UNS topic root is made of. `NORTHBOUND_BROKER_URL`
 * (with `NORTHBOUND_FORMAT`, `NORTHBOUND_TOPIC_ROOT`, `NORTHBOUND_USERNAME`)
 * makes a one-target setup without a file: the section's own `brokerUrl`,
 * read as a target named `default`. Every mistake is named with its path at
 * start, a topic root the configuration only implies (from `enterprise`,
 * `site`, `area` and `gateway.name`) included.
 */
import { z } from 'zod';
import type { PartSettings } from '../../core/config/config-parts.js';
import { sparkplugIdProblem, unsRootProblem } from './topics.js';

/** mqtt://host[:port] or mqtts://host[:port] (credentials belong in username and password, not in the URL). */
export const BROKER_URL = /^mqtts?:\/\/[^\s/@]+$/;
const BROKER_URL_HINT = 'an mqtt:// or mqtts:// URL such as mqtt://broker.plant:1883 (user name and password go in username and password)';

export const FORMATS = ['uns', 'sparkplug'] as const;
export type NorthboundFormat = (typeof FORMATS)[number];

/** The name of the target the section's own `brokerUrl` (or NORTHBOUND_BROKER_URL) makes. */
export const SHORTHAND_TARGET = 'default';

const TARGET_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;
const fileName = z.string().min(1).max(1024);

export const tlsSchema = z
  .object({
    /** A PEM file of the CA (or the certificate itself) to trust for an mqtts broker with a private certificate. */
    caFile: fileName.optional(),
    /** The gateway's client certificate and key (PEM files, both or neither), for a broker that asks for one. */
    certFile: fileName.optional(),
    keyFile: fileName.optional(),
  })
  .strict();

export const targetSchema = z
  .object({
    name: z.string().regex(TARGET_NAME, '1-32 letters, digits, _ or -, starting with a letter or digit'),
    /** What the target is for, in words (shown in gateway-info). */
    description: z.string().max(500).optional(),
    brokerUrl: z.string().max(512).regex(BROKER_URL, BROKER_URL_HINT),
    username: z.string().min(1).max(256).optional(),
    /** The password in the file; NORTHBOUND_PASSWORD_<NAME> (the name in capitals, - as _) or passwordFile keep it out of the file. */
    password: z.string().min(1).max(1024).optional(),
    passwordFile: fileName.optional(),
    /** The MQTT client id; `{gateway.name}-northbound-{name}` when absent. */
    clientId: z.string().min(1).max(128).regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces').optional(),
    tls: tlsSchema.optional(),
    format: z.enum(FORMATS).default('uns'),
    /** UNS: the topic root (`{enterprise}/{site}/{area}/{gateway.name}` when absent). Sparkplug: the group_id (`{site}` when absent). */
    topicRoot: z.string().max(512).optional(),
    /** Sparkplug: the edge node id (`gateway.name` when absent). */
    edgeNodeId: z.string().max(128).optional(),
    /** 1: the cursor moves only with the broker's acknowledgement (at least once). 0: at most once, no acknowledgement waited for. */
    qos: z.union([z.literal(0), z.literal(1)]).default(1),
    enabled: z.boolean().default(true),
    /** MQTT 5, or 3.1.1 (4); a broker that refuses 5 is spoken 3.1.1 to. */
    protocolVersion: z.union([z.literal(5), z.literal(4)]).default(5),
    keepaliveSeconds: z.number().int().min(5).max(600).default(30),
    /** The longest wait between two attempts to connect (exponential backoff with jitter from 1 s up to this). */
    reconnectMaxSeconds: z.number().int().min(1).max(3600).default(60),
    /** QoS 1 messages handed to the broker and not yet acknowledged, at most (fewer when the broker's receive maximum says so). */
    maxInFlight: z.number().int().min(1).max(10_000).default(500),
    /** The broker's maximum packet size when it does not say so itself (an MQTT 3.1.1 broker); MQTT 5 brokers tell it on connecting. */
    maxPacketBytes: z.number().int().min(1024).max(268_435_455).optional(),
  })
  .strict();

export type TargetConfig = z.output<typeof targetSchema>;

export const NORTHBOUND_FIELDS = {
  /** The ISA-95 levels of the default UNS topic root `{enterprise}/{site}/{area}/{gateway.name}`. */
  enterprise: z.string().min(1).max(128).default('enterprise'),
  site: z.string().min(1).max(128).default('site'),
  area: z.string().min(1).max(128).default('area'),
  /** A one-target setup (the target `default`): NORTHBOUND_BROKER_URL, NORTHBOUND_FORMAT, NORTHBOUND_TOPIC_ROOT, NORTHBOUND_USERNAME. */
  brokerUrl: z.string().max(512).regex(BROKER_URL, BROKER_URL_HINT).optional(),
  format: z.enum(FORMATS).optional(),
  topicRoot: z.string().max(512).optional(),
  username: z.string().min(1).max(256).optional(),
  targets: z.array(targetSchema).max(16).default([]),
};

export const NORTHBOUND_ENV = {
  NORTHBOUND_BROKER_URL: { field: 'brokerUrl', type: 'text' },
  NORTHBOUND_FORMAT: { field: 'format', type: 'text' },
  NORTHBOUND_TOPIC_ROOT: { field: 'topicRoot', type: 'text' },
  NORTHBOUND_USERNAME: { field: 'username', type: 'text' },
} as const;

/** The `northbound` section as parsed; undefined when the config has none. */
export type NorthboundConfig = PartSettings<typeof NORTHBOUND_FIELDS>;

/** Every target of the section, the shorthand one (`brokerUrl` of the section) first, each with its path in the file. */
export function configuredTargets(config: NorthboundConfig): { target: TargetConfig; path: (string | number)[] }[] {
  const listed = config.targets.map((target, i) => ({ target, path: ['northbound', 'targets', i] as (string | number)[] }));
  if (config.brokerUrl === undefined) return listed;
  const shorthand = targetSchema.parse({
    name: SHORTHAND_TARGET,
    brokerUrl: config.brokerUrl,
    ...(config.format ? { format: config.format } : {}),
    ...(config.topicRoot !== undefined ? { topicRoot: config.topicRoot } : {}),
    ...(config.username ? { username: config.username } : {}),
  });
  return [{ target: shorthand, path: ['northbound'] }, ...listed];
}

/** The topic root (UNS) or group_id (Sparkplug) a target publishes under, and the field or fields it comes from. */
export function topicRootOf(target: TargetConfig, config: NorthboundConfig, gatewayName: string): { root: string; from: string } {
  if (target.topicRoot !== undefined) return { root: target.topicRoot, from: 'topicRoot' };
  if (target.format === 'sparkplug') return { root: config.site, from: 'the default group_id, northbound.site' };
  return { root: `${config.enterprise}/${config.site}/${config.area}/${gatewayName}`, from: 'the default topic root from northbound.enterprise, .site, .area and gateway.name' };
}

/** The Sparkplug edge node id of a target. */
export function edgeNodeIdOf(target: TargetConfig, gatewayName: string): { id: string; from: string } {
  return target.edgeNodeId !== undefined ? { id: target.edgeNodeId, from: 'edgeNodeId' } : { id: gatewayName, from: 'the default edge node id, gateway.name' };
}

type Issue = { path: (string | number)[]; input: unknown; message: string };

/** One target's mistakes that need more than its own field: its topic root, its secrets, its TLS pair. */
function targetIssues(target: TargetConfig, path: (string | number)[], config: NorthboundConfig, gatewayName: string): Issue[] {
  const issues: Issue[] = [];
  const root = topicRootOf(target, config, gatewayName);
  const rootProblem = target.format === 'sparkplug' ? sparkplugIdProblem(root.root) : unsRootProblem(root.root);
  if (rootProblem) issues.push({ path: [...path, 'topicRoot'], input: root.root, message: `${target.format === 'sparkplug' ? 'the Sparkplug group_id' : 'the topic root'} (${root.from}) ${rootProblem}` });
  if (target.format === 'sparkplug') {
    const node = edgeNodeIdOf(target, gatewayName);
    const problem = sparkplugIdProblem(node.id);
    if (problem) issues.push({ path: [...path, 'edgeNodeId'], input: node.id, message: `the Sparkplug edge node id (${node.from}) ${problem}` });
  } else if (target.edgeNodeId !== undefined) {
    issues.push({ path: [...path, 'edgeNodeId'], input: target.edgeNodeId, message: 'edgeNodeId is for format "sparkplug" only' });
  }
  if (target.password !== undefined && target.passwordFile !== undefined) issues.push({ path: [...path, 'passwordFile'], input: target.passwordFile, message: 'give password or passwordFile, not both' });
  if ((target.password !== undefined || target.passwordFile !== undefined) && target.username === undefined) issues.push({ path: [...path, 'username'], input: undefined, message: 'a password needs a username' });
  const tls = target.tls;
  if (tls && (tls.certFile === undefined) !== (tls.keyFile === undefined)) {
    const missing = tls.certFile === undefined ? 'certFile' : 'keyFile';
    issues.push({ path: [...path, 'tls', missing], input: undefined, message: `needed with tls.${missing === 'certFile' ? 'keyFile' : 'certFile'} (the gateway's client certificate and its key, PEM files)` });
  }
  if (tls && target.brokerUrl.startsWith('mqtt://')) issues.push({ path: [...path, 'tls'], input: tls, message: 'tls is for an mqtts:// broker; this one is mqtt://' });
  return issues;
}

/** The rules across a section's targets and `gateway.name`: each name once, topic roots and ids publishable, secrets and TLS pairs whole. */
export function checkNorthbound(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  const section = config.northbound as NorthboundConfig | undefined;
  if (!section) return;
  const gatewayName = ((config.gateway as { name?: string } | undefined)?.name ?? 'gateway').trim();
  if (section.brokerUrl === undefined) {
    for (const field of ['format', 'topicRoot', 'username'] as const) {
      if (section[field] !== undefined) ctx.addIssue({ code: 'custom', path: ['northbound', field], input: section[field], message: `is for the one-target setup with northbound.brokerUrl (or NORTHBOUND_BROKER_URL), which is not given; write it in a target of northbound.targets` });
    }
  }
  const names = new Set<string>();
  for (const { target, path } of configuredTargets(section)) {
    if (names.has(target.name)) ctx.addIssue({ code: 'custom', path: [...path, 'name'], input: target.name, message: `duplicate target name '${target.name}'${target.name === SHORTHAND_TARGET ? ` (northbound.brokerUrl, or NORTHBOUND_BROKER_URL, makes the target '${SHORTHAND_TARGET}')` : ''}` });
    names.add(target.name);
    for (const issue of targetIssues(target, path, section, gatewayName)) ctx.addIssue({ code: 'custom', ...issue });
  }
}
