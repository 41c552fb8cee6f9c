/**
 * The `northbound` section: every mistake stops the start naming its path,
 * a topic root the configuration only implies included; the environment
 * makes a one-target setup; secrets and files are read at start.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../core/config/config.js';
import { readPart } from '../../../core/config/config-parts.js';
import { parseConfig } from '../../../core/roles/index.js';
import { NORTHBOUND_ENV, NORTHBOUND_FIELDS, checkNorthbound, type NorthboundConfig } from '../../../plugins/northbound/config.js';
import { passwordVariable, resolveTargets } from '../../../plugins/northbound/settings.js';

function problems(raw: unknown, env: NodeJS.ProcessEnv = {}): string[] {
  try {
    parseConfig(raw, 'plant.json', env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

const PART = { section: 'northbound', fields: NORTHBOUND_FIELDS, optional: true as const, env: NORTHBOUND_ENV, check: checkNorthbound };
const section = (raw: Record<string, unknown>, env: NodeJS.ProcessEnv = {}) => readPart(parseConfig(raw, 'plant.json', env), PART) as NorthboundConfig;
/** A problem line: the path, what was found, then `text`. */
const at = (path: string, text: string) => expect.stringMatching(new RegExp(`^${path.replace(/[.[\]]/g, '\\$&')}: found .*?; ${text}`));
const target = (extra: Record<string, unknown> = {}) => ({ name: 'plant', brokerUrl: 'mqtt://broker.plant:1883', ...extra });

describe('northbound configuration', () => {
  it('a topic root with +, # or an empty level is refused at start, naming its path', () => {
    const lines = problems({
      northbound: {
        targets: [target({ name: 'a', topicRoot: 'acme/+/line' }), target({ name: 'b', topicRoot: 'acme/#' }), target({ name: 'c', topicRoot: 'acme//line' }), target({ name: 'd', topicRoot: '/acme' }), target({ name: 'e', topicRoot: '' })],
      },
    });
    expect(lines).toEqual([
      at('northbound.targets[0].topicRoot', "the topic root \\(topicRoot\\) has '\\+' or '#', which are MQTT wildcards"),
      at('northbound.targets[1].topicRoot', "the topic root \\(topicRoot\\) has '\\+' or '#'"),
      at('northbound.targets[2].topicRoot', 'the topic root \\(topicRoot\\) has an empty level'),
      at('northbound.targets[3].topicRoot', 'the topic root \\(topicRoot\\) has an empty level'),
      at('northbound.targets[4].topicRoot', 'the topic root \\(topicRoot\\) is empty'),
    ]);
    expect(lines[0]).toContain('found "acme/+/line"');
  });

  it('the default topic root made of enterprise, site, area and gateway.name is checked too, and says where it comes from', () => {
    const lines = problems({ gateway: { name: 'hall+1' }, northbound: { targets: [target()] } });
    expect(lines).toEqual([at('northbound.targets[0].topicRoot', "the topic root \\(the default topic root from northbound\\.enterprise, \\.site, \\.area and gateway\\.name\\) has '\\+'")]);
    expect(lines[0]).toContain('found "enterprise/site/area/hall+1"');
    const root = resolveTargets(section({ gateway: { name: 'cell-7' }, northbound: { enterprise: 'acme', site: 'lyon', area: 'machining', targets: [target()] } }), 'cell-7', {})[0];
    expect(root).toMatchObject({ topicRoot: 'acme/lyon/machining/cell-7', format: 'uns', qos: 1, enabled: true, clientId: 'cell-7-northbound-plant' });
  });

  it('a Sparkplug group_id or edge node id is one topic level', () => {
    const lines = problems({ gateway: { name: 'a/b' }, northbound: { targets: [target({ format: 'sparkplug', topicRoot: 'plant/one' })] } });
    expect(lines).toEqual([
      at('northbound.targets[0].topicRoot', "the Sparkplug group_id \\(topicRoot\\) has '/'; a Sparkplug id is one topic level"),
      at('northbound.targets[0].edgeNodeId', "the Sparkplug edge node id \\(the default edge node id, gateway\\.name\\) has '/'"),
    ]);
    expect(problems({ northbound: { targets: [target({ topicRoot: 'spBv1.0/x' })] } })).toEqual([at('northbound.targets[0].topicRoot', ".*the Sparkplug B namespace")]);
  });

  it('names the field and the accepted values of a wrong broker URL, format or QoS, and refuses unknown fields and duplicate names', () => {
    const lines = problems({
      northbound: {
        targets: [target({ brokerUrl: 'http://broker' }), target({ name: 'plant', format: 'xml', qos: 2, colour: 'red' })],
      },
    });
    expect(lines.some((l) => l.startsWith('northbound.targets[0].brokerUrl') && l.includes('mqtt://'))).toBe(true);
    expect(lines.some((l) => l.startsWith('northbound.targets[1].format') && l.includes('"uns"') && l.includes('"sparkplug"'))).toBe(true);
    expect(lines.some((l) => l.startsWith('northbound.targets[1].qos'))).toBe(true);
    expect(lines.some((l) => l.startsWith('northbound.targets[1]') && l.includes('colour'))).toBe(true);
    expect(problems({ northbound: { targets: [target(), target()] } })).toEqual([at('northbound.targets[1].name', "duplicate target name 'plant'")]);
  });

  it('a password and a password file at once, a password without a user name, or half a client certificate are refused', () => {
    const lines = problems({
      northbound: {
        targets: [
          target({ name: 'a', username: 'gw', password: 'x', passwordFile: '/etc/pw' }),
          target({ name: 'b', password: 'x' }),
          target({ name: 'c', brokerUrl: 'mqtts://broker:8883', tls: { certFile: '/etc/cert.pem' } }),
          target({ name: 'd', tls: { caFile: '/etc/ca.pem' } }),
        ],
      },
    });
    expect(lines).toEqual([
      at('northbound.targets[0].passwordFile', 'give password or passwordFile, not both'),
      at('northbound.targets[1].username', 'a password needs a username'),
      at('northbound.targets[2].tls.keyFile', 'needed with tls\\.certFile'),
      at('northbound.targets[3].tls', 'tls is for an mqtts:// broker'),
    ]);
  });

  it('NORTHBOUND_BROKER_URL, NORTHBOUND_FORMAT and NORTHBOUND_TOPIC_ROOT make a one-target setup without a file; a wrong format is named', () => {
    const env = { NORTHBOUND_BROKER_URL: 'mqtt://uns.plant:1883', NORTHBOUND_FORMAT: 'sparkplug', NORTHBOUND_TOPIC_ROOT: 'Lyon', NORTHBOUND_USERNAME: 'gw', NORTHBOUND_PASSWORD: 'from-env' };
    const targets = resolveTargets(section({}, env), 'gateway', env);
    expect(targets).toEqual([expect.objectContaining({ name: 'default', brokerUrl: 'mqtt://uns.plant:1883', format: 'sparkplug', topicRoot: 'Lyon', edgeNodeId: 'gateway', username: 'gw', password: 'from-env' })]);
    expect(problems({}, { NORTHBOUND_BROKER_URL: 'mqtt://uns.plant:1883', NORTHBOUND_FORMAT: 'json' })).toEqual([expect.stringMatching(/^northbound\.format: .*"uns".*"sparkplug"/)]);
    expect(problems({}, { NORTHBOUND_FORMAT: 'uns' })).toEqual([at('northbound.format', 'is for the one-target setup with northbound\\.brokerUrl')]);
    expect(problems({ northbound: { targets: [target({ name: 'default' })] } }, { NORTHBOUND_BROKER_URL: 'mqtt://uns.plant:1883' })).toEqual([at('northbound.targets[0].name', "duplicate target name 'default' \\(northbound\\.brokerUrl, or NORTHBOUND_BROKER_URL")]);
  });

  it('a password comes from NORTHBOUND_PASSWORD_<NAME>, else the file, else passwordFile; an unreadable file stops the start naming the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'nb-config-'));
    writeFileSync(join(dir, 'pw'), 'from-file\n');
    const config = section({ northbound: { targets: [target({ name: 'uns-a', username: 'u', passwordFile: join(dir, 'pw') }), target({ name: 'b', username: 'u', password: 'in-file' }), target({ name: 'c', username: 'u', passwordFile: join(dir, 'missing') })] } });
    expect(passwordVariable('uns-a')).toBe('NORTHBOUND_PASSWORD_UNS_A');
    expect(() => resolveTargets(config, 'gw', {})).toThrow(/northbound\.targets\[2\]\.passwordFile: cannot read .*missing.*ENOENT/);
    const env = { NORTHBOUND_PASSWORD_C: 'from-env' };
    expect(resolveTargets(config, 'gw', env).map((t) => t.password)).toEqual(['from-file', 'in-file', 'from-env']);
    const anonymous = section({ northbound: { targets: [target({ name: 'open' })] } });
    expect(() => resolveTargets(anonymous, 'gw', { NORTHBOUND_PASSWORD_OPEN: 'x' })).toThrow('NORTHBOUND_PASSWORD_OPEN (environment) is set, but northbound.targets[0].username is not: a password needs a username');
  });
});
