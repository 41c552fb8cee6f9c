/**
 * The documents an agent answers /current and /sample with: an
 * MTConnectStreams document (its Header's sequence numbers and every
 * observation, in document order) or an MTConnectError document (its error
 * codes: OUT_OF_RANGE, NO_DEVICE, …), in both the deprecated `<Error
 * errorCode=…>` form and the 2.6+ one (`<OutOfRange>`).
 */
import { typeOfElement, type Category } from './device-model.js';
import { integerAttribute, readXml, XmlProblem, type XmlElement, type XmlLimits } from './xml-reader.js';

export const CONDITION_LEVELS = ['NORMAL', 'WARNING', 'FAULT', 'UNAVAILABLE'] as const;
export type ConditionLevel = (typeof CONDITION_LEVELS)[number];

export interface StreamObservation {
  dataItemId: string;
  /** MTConnect type: from the element name, or a condition's `type` attribute. */
  type: string;
  subType?: string;
  category: Category;
  sequence: number;
  /** ISO 8601 text as the agent wrote it. */
  timestamp: string;
  /** The element's text; a condition's message. */
  value: string;
  /** A condition's level and native fields. */
  condition?: { level: ConditionLevel; nativeCode?: string; nativeSeverity?: string; qualifier?: string };
  /** ASSET_CHANGED / ASSET_REMOVED: the asset's type. */
  assetType?: string;
}

export interface StreamsHeader {
  instanceId: number;
  /** When the agent's device model last changed (MTConnect 1.7 and later); a reader probes again when it moves. */
  deviceModelChangeTime?: string;
  nextSequence: number;
  firstSequence: number;
  lastSequence: number;
}

export interface AgentError {
  code: string;
  message: string;
}

export type StreamsDocument =
  | { kind: 'streams'; header: StreamsHeader; observations: StreamObservation[] }
  | { kind: 'error'; errors: AgentError[]; instanceId: number | undefined };

const CONTAINERS: Readonly<Record<string, Category>> = { Samples: 'SAMPLE', Events: 'EVENT', Condition: 'CONDITION' };

function header(e: XmlElement): StreamsHeader {
  const numbers = ['instanceId', 'nextSequence', 'firstSequence', 'lastSequence'] as const;
  const values = numbers.map((n) => integerAttribute(e.attributes, n));
  const missing = numbers.filter((_, i) => values[i] === undefined);
  if (missing.length > 0) throw new XmlProblem(`the Header has no whole-number ${missing.join(', ')}`);
  const [instanceId, nextSequence, firstSequence, lastSequence] = values as number[];
  const changed = e.attributes.deviceModelChangeTime?.slice(0, 64);
  return { instanceId: instanceId!, nextSequence: nextSequence!, firstSequence: firstSequence!, lastSequence: lastSequence!, ...(changed ? { deviceModelChangeTime: changed } : {}) };
}

function observationOf(e: XmlElement, category: Category): StreamObservation {
  const a = e.attributes;
  const sequence = integerAttribute(a, 'sequence');
  if (!a.dataItemId || sequence === undefined || !a.timestamp) {
    throw new XmlProblem(`<${e.name}> lacks ${!a.dataItemId ? 'dataItemId' : sequence === undefined ? 'a whole-number sequence' : 'timestamp'}`);
  }
  const base = { dataItemId: a.dataItemId, sequence, timestamp: a.timestamp, category, value: '', ...(a.subType ? { subType: a.subType } : {}) };
  if (category === 'CONDITION') {
    const level = e.name.toUpperCase() as ConditionLevel;
    if (!CONDITION_LEVELS.includes(level)) throw new XmlProblem(`<${e.name}> is not a condition level (${CONDITION_LEVELS.join(', ')})`);
    return {
      ...base,
      type: a.type ?? 'UNKNOWN',
      condition: {
        level,
        ...(a.nativeCode ? { nativeCode: a.nativeCode } : {}),
        ...(a.nativeSeverity ? { nativeSeverity: a.nativeSeverity } : {}),
        ...(a.qualifier ? { qualifier: a.qualifier } : {}),
      },
    };
  }
  return { ...base, type: typeOfElement(e.name), ...(a.assetType ? { assetType: a.assetType } : {}) };
}

/** Parses a /current or /sample answer; throws XmlProblem when it is neither streams nor an error document. */
export function parseStreams(text: string, limits?: XmlLimits): StreamsDocument {
  let root: string | undefined;
  let head: StreamsHeader | undefined;
  let errorInstance: number | undefined;
  const observations: StreamObservation[] = [];
  const errors: AgentError[] = [];
  const path: string[] = [];
  let current: { observation: StreamObservation; depth: number } | undefined;
  let errorFrame: { code: string; message: string; depth: number } | undefined;

  const open = (e: XmlElement): boolean => {
    const parent = path[path.length - 1];
    const grandparent = path[path.length - 2];
    path.push(e.name);
    if (e.depth === 0) root = e.name;
    else if (e.depth === 1 && e.name === 'Header' && root === 'MTConnectStreams') head = header(e);
    else if (e.depth === 1 && e.name === 'Header' && root === 'MTConnectError') errorInstance = integerAttribute(e.attributes, 'instanceId');
    else if (root === 'MTConnectStreams' && parent !== undefined && CONTAINERS[parent] && grandparent === 'ComponentStream') {
      current = { observation: observationOf(e, CONTAINERS[parent]), depth: e.depth };
      return true;
    } else if (root === 'MTConnectError' && e.name !== 'Header' && (parent === 'Errors' || (parent === 'MTConnectError' && e.name === 'Error'))) {
      errorFrame = { code: e.attributes.errorCode ?? typeOfElement(e.name), message: '', depth: e.depth };
      return true;
    } else if (errorFrame && e.name === 'ErrorMessage') return true;
    return false;
  };
  const close = (e: XmlElement, text: string | undefined): void => {
    path.pop();
    if (current && e.depth === current.depth) {
      current.observation.value = (text ?? '').trim();
      observations.push(current.observation);
      current = undefined;
    } else if (errorFrame && e.name === 'ErrorMessage') errorFrame.message = (text ?? '').trim();
    else if (errorFrame && e.depth === errorFrame.depth) {
      errors.push({ code: errorFrame.code, message: errorFrame.message || (text ?? '').trim() });
      errorFrame = undefined;
    }
  };
  readXml(text, { open, close }, limits);
  if (root === 'MTConnectError') {
    if (errors.length === 0) throw new XmlProblem('an MTConnectError document without an error');
    return { kind: 'error', errors, instanceId: errorInstance };
  }
  if (root !== 'MTConnectStreams') throw new XmlProblem(`not an MTConnectStreams document (root <${root ?? 'none'}>)`);
  if (!head) throw new XmlProblem('an MTConnectStreams document without a Header');
  return { kind: 'streams', header: head, observations };
}

/**
 * A document's observations in sequence order: an agent groups them by
 * component and kind, so a condition's FAULT may stand before the NORMAL
 * that came earlier. Applied in document order, the older one would win.
 */
export function inSequenceOrder(observations: StreamObservation[]): StreamObservation[] {
  return observations.sort((a, b) => a.sequence - b.sequence);
}
