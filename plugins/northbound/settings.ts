/**
 * What each target runs with, resolved once at start from the parsed
 * section: its topic root or Sparkplug ids with the defaults applied, its
 * client id, its password (NORTHBOUND_PASSWORD_<NAME>, the file's
 * `password`, or `passwordFile`) and its TLS files read. A file that cannot
 * be read stops the start naming the field.
 */
import { readConfigFile } from '../../core/config/config.js';
import { configuredTargets, edgeNodeIdOf, SHORTHAND_TARGET, topicRootOf, type NorthboundConfig, type NorthboundFormat } from './config.js';
import { clientIdOf } from './topics.js';

export interface TargetSettings {
  name: string;
  description?: string;
  format: NorthboundFormat;
  brokerUrl: string;
  username?: string;
  password?: string;
  clientId: string;
  /** UNS: the topic root. Sparkplug: the group_id. */
  topicRoot: string;
  /** Sparkplug only. */
  edgeNodeId: string;
  qos: 0 | 1;
  enabled: boolean;
  protocolVersion: 4 | 5;
  keepaliveSeconds: number;
  reconnectCapMs: number;
  maxInFlight: number;
  maxPacketBytes?: number;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

/** The environment variable holding a target's password: NORTHBOUND_PASSWORD_<NAME>, the name in capitals with - as _. */
export function passwordVariable(name: string): string {
  return `NORTHBOUND_PASSWORD_${name.toUpperCase().replace(/-/g, '_')}`;
}

/** A password file's text without its final line break. */
function readPassword(file: string, field: string): string {
  const text = readConfigFile(file, field).toString('utf8').replace(/\r?\n$/, '');
  if (!text) throw new Error(`${field}: '${file.slice(0, 256)}' is empty`);
  return text;
}

/** Every target of the section with its defaults applied and its secrets and files read. */
export function resolveTargets(config: NorthboundConfig | undefined, gatewayName: string, env: Readonly<Record<string, string | undefined>>): TargetSettings[] {
  if (!config) return [];
  return configuredTargets(config).map(({ target, path }) => {
    const at = (field: string) => [...path, field].map((key, i) => (typeof key === 'number' ? `[${key}]` : i ? `.${key}` : key)).join('');
    const variable = target.name === SHORTHAND_TARGET && env.NORTHBOUND_PASSWORD ? 'NORTHBOUND_PASSWORD' : passwordVariable(target.name);
    const fromEnv = env[variable] || undefined;
    if (fromEnv !== undefined && target.username === undefined) throw new Error(`${variable} (environment) is set, but ${at('username')} is not: a password needs a username`);
    const password = fromEnv ?? target.password ?? (target.passwordFile !== undefined ? readPassword(target.passwordFile, at('passwordFile')) : undefined);
    const tls = target.tls;
    return {
      name: target.name,
      ...(target.description !== undefined ? { description: target.description } : {}),
      format: target.format,
      brokerUrl: target.brokerUrl,
      ...(target.username !== undefined ? { username: target.username } : {}),
      ...(password !== undefined ? { password } : {}),
      clientId: target.clientId ?? clientIdOf(`${gatewayName}-northbound-${target.name}`),
      topicRoot: topicRootOf(target, config, gatewayName).root,
      edgeNodeId: edgeNodeIdOf(target, gatewayName).id,
      qos: target.qos,
      enabled: target.enabled,
      protocolVersion: target.protocolVersion,
      keepaliveSeconds: target.keepaliveSeconds,
      reconnectCapMs: target.reconnectMaxSeconds * 1000,
      maxInFlight: target.maxInFlight,
      ...(target.maxPacketBytes !== undefined ? { maxPacketBytes: target.maxPacketBytes } : {}),
      ...(tls?.caFile !== undefined ? { ca: readConfigFile(tls.caFile, at('tls.caFile')) } : {}),
      ...(tls?.certFile !== undefined && tls.keyFile !== undefined ? { cert: readConfigFile(tls.certFile, at('tls.certFile')), key: readConfigFile(tls.keyFile, at('tls.keyFile')) } : {}),
    };
  });
}

