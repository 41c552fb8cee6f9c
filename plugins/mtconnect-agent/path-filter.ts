/**
 * The `path=` filter: the XPath subset MTConnect clients send, evaluated on
 * the device model. Alternatives joined by `|`; each a chain of steps
 * `/Name` (a child) or `//Name` (a descendant), Name an element of the model
 * (Devices, Device, Agent, Controller, Path, Adapters, Adapter, DataItems,
 * DataItem, Components) or `*`, each with at most one predicate
 * `[@attribute="value"]` (id, name, type, subType, category, uuid). A path
 * that ends on a device or component selects every data item under it. The
 * result is the set of data item ids; a path that parses but selects nothing
 * is refused as agents do (INVALID_XPATH).
 */
import { AgentError, quoted } from './agent-error.js';
import type { ComponentDef, DataItemDef, DeviceModel } from './model.js';

/** Longest path accepted. */
export const PATH_MAX_LENGTH = 1024;
const MAX_ALTERNATIVES = 16;
const MAX_STEPS = 16;

interface Step {
  descendant: boolean;
  name: string;
  predicate?: { attribute: string; value: string };
}

type Node = { kind: 'root' } | { kind: 'component'; c: ComponentDef } | { kind: 'item'; d: DataItemDef };

const STEP = /^(\/\/?)([A-Za-z*][A-Za-z0-9_]*)(?:\[@([A-Za-z]+)\s*=\s*(?:"([^"]*)"|'([^']*)')\])?/;
const ATTRIBUTES = new Set(['id', 'name', 'type', 'subType', 'category', 'uuid']);
/** Container elements of the document that the model does not hold as nodes: stepping through them stays in place. */
const CONTAINERS = new Set(['Devices', 'DataItems', 'Components']);

function parseAlternative(text: string, whole: string): Step[] {
  const steps: Step[] = [];
  let rest = text.trim();
  while (rest.length > 0) {
    const m = STEP.exec(rest);
    if (!m || steps.length >= MAX_STEPS) throw invalid(whole);
    const [all, slashes, name, attribute, dq, sq] = m;
    if (attribute !== undefined && !ATTRIBUTES.has(attribute)) throw invalid(whole);
    steps.push({ descendant: slashes === '//', name: name!, ...(attribute !== undefined ? { predicate: { attribute, value: (dq ?? sq)! } } : {}) });
    rest = rest.slice(all.length).trim();
  }
  if (steps.length === 0) throw invalid(whole);
  return steps;
}

function invalid(path: string): AgentError {
  return new AgentError('InvalidXPath', `The path could not be parsed. Invalid syntax: ${quoted(path)}`);
}

function children(node: Node, model: DeviceModel): Node[] {
  if (node.kind === 'root') return model.devices.map((c) => ({ kind: 'component', c }));
  if (node.kind === 'item') return [];
  return [...node.c.dataItems.map((d): Node => ({ kind: 'item', d })), ...node.c.components.map((c): Node => ({ kind: 'component', c }))];
}

function descendants(node: Node, model: DeviceModel, into: Node[]): Node[] {
  for (const child of children(node, model)) {
    into.push(child);
    descendants(child, model, into);
  }
  return into;
}

function matches(node: Node, step: Step): boolean {
  if (node.kind === 'root') return false;
  const element = node.kind === 'item' ? 'DataItem' : node.c.element;
  if (step.name !== '*' && step.name !== element) return false;
  if (!step.predicate) return true;
  const { attribute, value } = step.predicate;
  const source = (node.kind === 'item' ? node.d : node.c) as unknown as Record<string, unknown>;
  return source[attribute] === value;
}

function evaluate(steps: Step[], model: DeviceModel): Node[] {
  let nodes: Node[] = [{ kind: 'root' }];
  for (const step of steps) {
    if (CONTAINERS.has(step.name) && !step.predicate) {
      // `//Devices` or `/DataItems`: the containers are where the nodes already are.
      if (step.descendant) nodes = [...nodes, ...nodes.flatMap((n) => descendants(n, model, []))];
      continue;
    }
    const next = new Set<Node>();
    for (const node of nodes) {
      const candidates = step.descendant ? descendants(node, model, []) : children(node, model);
      for (const c of candidates) if (matches(c, step)) next.add(c);
    }
    nodes = [...next];
  }
  return nodes;
}

function collect(node: Node, into: Set<string>): void {
  if (node.kind === 'item') into.add(node.d.id);
  else if (node.kind === 'component') {
    for (const d of node.c.dataItems) into.add(d.id);
    for (const c of node.c.components) collect({ kind: 'component', c }, into);
  }
}

/** The data item ids `path` selects; an AgentError (INVALID_XPATH) when it does not parse or selects nothing. */
export function selectDataItems(path: string, model: DeviceModel): Set<string> {
  if (path.length > PATH_MAX_LENGTH) throw new AgentError('InvalidXPath', `The path is longer than ${PATH_MAX_LENGTH} characters`);
  const alternatives = path.split('|');
  if (alternatives.length > MAX_ALTERNATIVES) throw new AgentError('InvalidXPath', `The path has more than ${MAX_ALTERNATIVES} alternatives joined by '|'`);
  const ids = new Set<string>();
  for (const alternative of alternatives) for (const node of evaluate(parseAlternative(alternative, path), model)) collect(node, ids);
  if (ids.size === 0) throw new AgentError('InvalidXPath', `The path selects no data item: ${quoted(path)}`);
  return ids;
}
