/**
 * The query parameters of the agent's requests, read as cppagent reads them
 * and bounded: a value of the wrong form is INVALID_PARAMETER_VALUE naming
 * the parameter and the form expected; a number outside what the agent
 * serves is OUT_OF_RANGE with its minimum and maximum. Unknown parameters
 * are ignored, as agents do.
 */
import { AgentError, outOfRange, quoted } from './agent-error.js';
import { MAX_SEQUENCE } from './sequence-numbers.js';

/** Streaming: the shortest and longest interval (ms) a client may ask for. */
export const INTERVAL_RANGE = { min: 0, max: 3_600_000 } as const;
/** Streaming: the shortest and longest heartbeat (ms); the default is 10 s as cppagent's. */
export const HEARTBEAT_RANGE = { min: 100, max: 3_600_000, default: 10_000 } as const;
/** The default `count` of /sample and /assets. */
export const DEFAULT_COUNT = 100;

type Query = Record<string, string | string[] | undefined>;

function single(query: Query, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw new AgentError('InvalidParameterValue', `'${name}' is given more than once`, { name, value: quoted(value.join(',')), type: 'string' });
  return value;
}

/** A whole number parameter; `unsigned` ones are 0 or more. */
function integer(query: Query, name: string, unsigned: boolean): number | undefined {
  const text = single(query, name);
  if (text === undefined) return undefined;
  const pattern = unsigned ? /^\d{1,16}$/ : /^-?\d{1,16}$/;
  const value = Number(text);
  if (!pattern.test(text) || !Number.isSafeInteger(value) || (unsigned && value > MAX_SEQUENCE)) {
    const type = unsigned ? 'unsigned_integer' : 'integer';
    throw new AgentError('InvalidParameterValue', `'${name}' must be ${unsigned ? 'an unsigned' : 'an'} integer, found '${quoted(text)}'`, { name, value: quoted(text), type, format: 'int64' });
  }
  return value;
}

function boolean(query: Query, name: string): boolean | undefined {
  const text = single(query, name);
  if (text === undefined) return undefined;
  if (text === 'true' || text === 'false') return text === 'true';
  throw new AgentError('InvalidParameterValue', `'${name}' must be true or false, found '${quoted(text)}'`, { name, value: quoted(text), type: 'bool' });
}

/** `format`: xml or json; undefined to follow the Accept header. */
export function formatParam(query: Query): 'xml' | 'json' | undefined {
  const text = single(query, 'format');
  if (text === undefined) return undefined;
  if (text === 'xml' || text === 'json') return text;
  throw new AgentError('InvalidParameterValue', `'format' must be xml or json, found '${quoted(text)}'`, { name: 'format', value: quoted(text), type: 'string' });
}

/** `deviceType`: Device or Agent (only that kind of device). */
export function deviceTypeParam(query: Query): 'Device' | 'Agent' | undefined {
  const text = single(query, 'deviceType');
  if (text === undefined) return undefined;
  if (text === 'Device' || text === 'Agent') return text;
  throw new AgentError('InvalidParameterValue', `'deviceType' must be Device or Agent, found '${quoted(text)}'`, { name: 'deviceType', value: quoted(text), type: 'string' });
}

/** What /current accepts. */
export interface CurrentParams {
  path?: string | undefined;
  at?: number | undefined;
  interval?: number | undefined;
}

export function currentParams(query: Query): CurrentParams {
  const interval = integer(query, 'interval', false);
  // A current stream sends a document every interval: cppagent asks for more than 0.
  if (interval !== undefined && (interval < 1 || interval > INTERVAL_RANGE.max)) throw outOfRange('interval', interval, 1, INTERVAL_RANGE.max);
  boolean(query, 'pretty');
  return { path: single(query, 'path'), at: integer(query, 'at', true), interval };
}

/** What /sample accepts. */
export interface SampleParams {
  path?: string | undefined;
  from?: number | undefined;
  to?: number | undefined;
  count: number;
  interval?: number | undefined;
  heartbeat: number;
}

export function sampleParams(query: Query): SampleParams {
  const interval = integer(query, 'interval', false);
  if (interval !== undefined && (interval < INTERVAL_RANGE.min || interval > INTERVAL_RANGE.max)) throw outOfRange('interval', interval, INTERVAL_RANGE.min, INTERVAL_RANGE.max);
  const heartbeat = integer(query, 'heartbeat', false) ?? HEARTBEAT_RANGE.default;
  if (heartbeat < HEARTBEAT_RANGE.min || heartbeat > HEARTBEAT_RANGE.max) throw outOfRange('heartbeat', heartbeat, HEARTBEAT_RANGE.min, HEARTBEAT_RANGE.max);
  boolean(query, 'pretty');
  return {
    path: single(query, 'path'),
    from: integer(query, 'from', true),
    to: integer(query, 'to', true),
    count: integer(query, 'count', false) ?? DEFAULT_COUNT,
    interval,
    heartbeat,
  };
}

/** What /assets accepts. */
export interface AssetParams {
  type?: string | undefined;
  removed: boolean;
  count: number;
  device?: string | undefined;
}

export function assetParams(query: Query): AssetParams {
  const count = integer(query, 'count', false) ?? DEFAULT_COUNT;
  if (count < 1 || count > 10_000) throw outOfRange('count', count, 1, 10_000);
  return { type: single(query, 'type'), removed: boolean(query, 'removed') ?? false, count, device: single(query, 'device') };
}
