/**
 * MTConnect assets as far as the gateway uses them: a CuttingTool's life
 * (its CuttingToolLifeCycle's ToolLife entries, ProgramToolNumber and
 * ProgramToolGroup) becomes ToolLife records; other asset types are kept by
 * id and type only. Read from an agent's MTConnectAssets document or from
 * the body of an adapter's `@ASSET@` line.
 */
import type { ToolLifeRecord } from '../../core/driver-seam/driver.js';
import { parseStreams, type AgentError } from './streams.js';
import { readXml, XmlProblem, type XmlElement, type XmlLimits } from './xml-reader.js';

/** One ToolLife entry of a cutting tool's life cycle. */
export interface ToolLifeEntry {
  type: string;
  countDirection: 'UP' | 'DOWN';
  limit: number | undefined;
  value: number | undefined;
}

export interface ParsedAsset {
  assetId: string;
  /** The asset's element: CuttingTool, File, RawMaterial, … */
  type: string;
  /** Unix ms of the asset's timestamp attribute, when it has one. */
  timestamp?: number;
  removed: boolean;
  /** A cutting tool's numbers and life entries. */
  tool?: { toolId?: string; programToolNumber?: string; programToolGroup?: string; life: ToolLifeEntry[] };
}

export type AssetsDocument = { kind: 'assets'; assets: ParsedAsset[] } | { kind: 'error'; errors: AgentError[] };

const finiteOrUndefined = (text: string | undefined): number | undefined => {
  if (text === undefined || text.trim() === '') return undefined;
  const n = Number(text);
  return Number.isFinite(n) ? n : undefined;
};

/**
 * Parses an MTConnectAssets document, or one asset element (an adapter's
 * `@ASSET@` body, whose id the line gives as `assetId`). Throws XmlProblem.
 */
export function parseAssets(text: string, limits?: XmlLimits, assetId?: string): AssetsDocument {
  let root: string | undefined;
  const assets: ParsedAsset[] = [];
  const path: string[] = [];
  let asset: ParsedAsset | undefined;
  let assetDepth = -1;
  let life: { type: string; countDirection: 'UP' | 'DOWN'; limit: number | undefined } | undefined;

  const open = (e: XmlElement): boolean => {
    const parent = path[path.length - 1];
    path.push(e.name);
    if (e.depth === 0) root = e.name;
    const isAsset = (e.depth === 0 && e.name !== 'MTConnectAssets' && e.name !== 'MTConnectError') || (root === 'MTConnectAssets' && parent === 'Assets');
    if (isAsset) {
      const id = e.depth === 0 && assetId !== undefined ? assetId : e.attributes.assetId;
      if (!id) throw new XmlProblem(`a <${e.name}> asset without an assetId`);
      const timestamp = e.attributes.timestamp ? Date.parse(e.attributes.timestamp) : NaN;
      asset = { assetId: id, type: e.name, removed: e.attributes.removed === 'true', ...(Number.isFinite(timestamp) ? { timestamp } : {}) };
      if (e.name === 'CuttingTool') asset.tool = { ...(e.attributes.toolId ? { toolId: e.attributes.toolId } : {}), life: [] };
      assetDepth = e.depth;
      return false;
    }
    if (!asset?.tool || parent !== 'CuttingToolLifeCycle') return false;
    if (e.name === 'ToolLife') {
      life = { type: e.attributes.type ?? '', countDirection: e.attributes.countDirection === 'DOWN' ? 'DOWN' : 'UP', limit: finiteOrUndefined(e.attributes.limit) };
      return true;
    }
    return e.name === 'ProgramToolNumber' || e.name === 'ProgramToolGroup';
  };
  const close = (e: XmlElement, text: string | undefined): void => {
    path.pop();
    const tool = asset?.tool;
    if (tool && e.name === 'ToolLife' && life) {
      tool.life.push({ ...life, value: finiteOrUndefined(text) });
      life = undefined;
    } else if (tool && e.name === 'ProgramToolNumber' && text?.trim()) tool.programToolNumber = text.trim();
    else if (tool && e.name === 'ProgramToolGroup' && text?.trim()) tool.programToolGroup = text.trim();
    if (asset && e.depth === assetDepth) {
      assets.push(asset);
      asset = undefined;
    }
  };
  readXml(text, { open, close }, limits);
  if (root === 'MTConnectError') {
    const parsed = parseStreams(text, limits);
    return { kind: 'error', errors: parsed.kind === 'error' ? parsed.errors : [] };
  }
  return { kind: 'assets', assets };
}

const wholeNumber = (text: string | undefined): number | undefined => {
  if (text === undefined || !/^\d+$/.test(text)) return undefined;
  const n = Number(text);
  return Number.isSafeInteger(n) ? n : undefined;
};

const UNITS: Readonly<Record<string, ToolLifeRecord['unit']>> = { MINUTES: 'minutes', PART_COUNT: 'count' };

/**
 * A cutting tool's ToolLife record: the first life entry counted in minutes
 * or parts that has a limit. Undefined when the tool has no program tool
 * number (nor a numeric toolId) or no such entry: without a limit there is
 * no remaining life to report. MTConnect has no offset number, so offsetNum
 * is 0, and groupNum is 0 without a ProgramToolGroup.
 */
export function toolLifeOf(asset: ParsedAsset): ToolLifeRecord | undefined {
  const tool = asset.tool;
  if (!tool || asset.removed) return undefined;
  const toolNum = wholeNumber(tool.programToolNumber) ?? wholeNumber(tool.toolId);
  if (toolNum === undefined) return undefined;
  const entry = tool.life.find((l) => UNITS[l.type] !== undefined && l.limit !== undefined && l.limit > 0 && l.value !== undefined);
  if (!entry || entry.limit === undefined || entry.value === undefined) return undefined;
  const used = entry.countDirection === 'DOWN' ? entry.limit - entry.value : entry.value;
  const remaining = Math.max(0, Math.min(100, ((entry.limit - used) / entry.limit) * 100));
  return {
    toolNum,
    groupNum: wholeNumber(tool.programToolGroup) ?? 0,
    offsetNum: 0,
    used,
    limit: entry.limit,
    unit: UNITS[entry.type] as ToolLifeRecord['unit'],
    remainingPercent: Math.round(remaining * 10) / 10,
  };
}
