/** The mqtt driver's options schema, topic filters and payload paths, and which families a mapping supports. */
import { describe, expect, it } from 'vitest';
import { describeIssues } from '../../../core/interfaces/schema-errors.js';
import { supportedFamilies } from '../../../drivers/mqtt/mapping.js';
import { mqttOptionsSchema, type MqttOptionsInput } from '../../../drivers/mqtt/index.js';
import { parsePath, topicMatches, valueAtPath } from '../../../drivers/mqtt/topics.js';
import { ValueStore } from '../../../drivers/mqtt/value-store.js';

/** The error lines the gateway shows for `driverOptions`. */
function problems(input: unknown): string[] {
  const parsed = mqttOptionsSchema.safeParse(input, { reportInput: true });
  return parsed.success ? [] : describeIssues(parsed.error.issues, input);
}

describe('mqtt driverOptions', () => {
  it('defaults to MQTT 3.1.1, 3 s connect, 1 s request, 10 s inactivity and the simulator mapping', () => {
    const options = mqttOptionsSchema.parse({});
    expect(options).toMatchObject({
      protocolVersion: 4, connectTimeoutMs: 3000, requestTimeoutMs: 1000, keepaliveSec: 10, qos: 0, inactivityTimeoutMs: 10_000,
      availability: { topic: 'cnc/{machineID}/availability', path: '', online: 'online', offline: 'offline' },
    });
    expect(options.topics.map((t) => t.topic)).toContain('cnc/{machineID}/status');
  });

  it.each<[string, unknown, RegExp]>([
    ['protocol version', { protocolVersion: 3 }, /^protocolVersion: found 3; protocolVersion must be 4 \(MQTT 3\.1\.1\) or 5 \(MQTT 5\)$/],
    ['url scheme', { url: 'http://broker' }, /^url: .*url must start with mqtt:\/\/ or mqtts:\/\//],
    ['timeout', { requestTimeoutMs: 5 }, /^requestTimeoutMs: found 5; requestTimeoutMs must be at least 10$/],
    ['qos', { qos: 3 }, /^qos: found 3; qos must be 0, 1 or 2$/],
    ['wildcard', { topics: [{ topic: 'a/#/b', items: { 'count.partCount': '' } }] }, /^topics\[0\]\.topic: .*'#' only as the whole last level/],
    ['placeholder', { topics: [{ topic: 'a/{line}', items: { 'count.partCount': '' } }] }, /unknown placeholder \{line\}; accepted: \{machineID\}/],
    ['item', { topics: [{ topic: 'a', items: { 'status.colour': 'x' } }] }, /^topics\[0\]\.items\.status\.colour: .*unknown item 'status\.colour'; accepted: status\.cncStatus, /],
    ['map value', { topics: [{ topic: 'a', items: { 'status.adjustedStatus': { path: 'x', map: { RUN: 'GO' } } } }] },
      /^topics\[0\]\.items\.status\.adjustedStatus\.map\.RUN: found "GO"; map value 'GO' is not one of RUNNING, HOLD, STOPPED, RESET, EMERGENCY$/],
    ['element field', { topics: [{ topic: 'a', lists: { alarm: { fields: { colour: 'x' } } } }] }, /unknown element field 'colour'; accepted: code, message, level, since/],
    ['duplicate item', { topics: [{ topic: 'a', items: { 'count.partCount': '' } }, { topic: 'b', items: { 'count.partCount': '' } }] }, /^topics\[1\]\.topic: .*already mapped by topics\[0\]/],
    ['tls pair', { tls: { cert: 'client.pem' } }, /^tls\.key: .*tls\.cert and tls\.key must be given together/],
    ['tls scheme', { url: 'mqtt://broker:1883', tls: {} }, /^url: .*url must start with mqtts:\/\/ when tls is set/],
  ])('names the field and what is accepted: %s', (_name, input, expected) => {
    expect(problems(input).join('\n')).toMatch(expected);
  });

  it('never echoes credentials typed into the url', () => {
    const lines = problems({ url: 'mqtt://cell:s3cret-pw@broker:1883' }).join('\n');
    expect(lines).toMatch(/url must not carry credentials/);
    expect(lines).not.toContain('s3cret-pw');
  });
});

describe('mqtt topics and payload paths', () => {
  it('matches + and # like a broker, and not $SYS topics by a leading wildcard', () => {
    expect(topicMatches('plant/+/MC-1/status', 'plant/hall-2/MC-1/status')).toBe(true);
    expect(topicMatches('plant/+/MC-1/status', 'plant/hall-2/MC-2/status')).toBe(false);
    expect(topicMatches('cnc/MC-1/#', 'cnc/MC-1')).toBe(true);
    expect(topicMatches('cnc/MC-1/#', 'cnc/MC-1/count/partCount')).toBe(true);
    expect(topicMatches('cnc/+', 'cnc/MC-1/status')).toBe(false);
    expect(topicMatches('#', '$SYS/broker/uptime')).toBe(false);
  });

  it('picks values by dotted paths with array indexes', () => {
    const doc = { feed: { actual: 1200 }, axes: [{ name: 'X' }, { name: 'Z', load: 17 }] };
    expect(valueAtPath(doc, parsePath('feed.actual'))).toBe(1200);
    expect(valueAtPath(doc, parsePath('axes[1].load'))).toBe(17);
    expect(valueAtPath(doc, parsePath('axes.1.name'))).toBe('Z');
    expect(valueAtPath(doc, parsePath('$'))).toBe(doc);
    expect(valueAtPath(doc, parsePath('feed.missing'))).toBeUndefined();
  });
});

describe('mqtt family support', () => {
  const familiesOf = (input: MqttOptionsInput) => {
    const options = mqttOptionsSchema.parse(input);
    return [...supportedFamilies(new ValueStore(options.topics, 'M', options.inactivityTimeoutMs).mapped)].sort();
  };

  it('supports a family only when the mapping covers its required fields', () => {
    expect(familiesOf({})).toEqual(['alarm', 'count', 'feedAndSpindle', 'load', 'position', 'status', 'timeData', 'toolNumber']);
    // An execution state alone says nothing about alarms, so there is no status to serve.
    expect(familiesOf({ topics: [{ topic: 's', items: { 'status.adjustedStatus': '' } }] })).toEqual([]);
    expect(familiesOf({ topics: [{ topic: 's', items: { 'status.adjustedStatus': '', 'status.alarmLevel': 'l' } }] })).toEqual(['status']);
    expect(familiesOf({ topics: [{ topic: 'c', items: { 'count.partCount': '' } }] })).toEqual([]);
    expect(familiesOf({ topics: [{ topic: 'f', items: { 'feedAndSpindle.feedRate': 'f', 'feedAndSpindle.spindleSpeed': 's' } }] })).toEqual([]);
  });
});
