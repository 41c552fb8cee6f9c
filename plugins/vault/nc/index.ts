/**
 * The NC-aware diff of two program versions: canonical blocks compared
 * (block numbers, comments, blanks, case and number spelling ignored unless
 * switched off), hunks with original line numbers, a machine summary, and on
 * request the unified text. Pure: bytes in, a JSON-ready object out.
 * docs/nc-diff.md describes the rules and the result.
 */
import { sha256Hex } from '../../../core/values/hash.js';
import { BlockInterner, type ComparedBlocks } from './block-interner.js';
import { machineRules, type CanonicalRules } from './blocks.js';
import { diffBlocks } from './block-diff.js';
import { buildHunks, changeRuns, type Hunk } from './hunks.js';
import { BlockWords } from './machine-facts.js';
import { summarise, type MachineSummary } from './machine-summary.js';
import { readProgramFacts } from './program-facts.js';
import { resolveOptions, type Dialect, type DiffOptionsInput } from './options.js';
import { readProgramText, resolveDialect, type ProgramText } from './program-text.js';
import { renderUnified } from './unified.js';

export type { DiffOptionsInput } from './options.js';

export interface ProgramSideInfo {
  /** Blocks compared (lines left once canonicalised; empty ones are not compared when comments or blanks are ignored). */
  blocks: number;
  lines: number;
  bytes: number;
  sha256: string;
  encoding: ProgramText['encoding'];
}

export interface CountShown {
  shown: number;
  total: number;
}

export interface ProgramDiff {
  dialect: Dialect;
  from: ProgramSideInfo;
  to: ProgramSideInfo;
  /** No block differs once canonicalised (the bytes may still differ: compare the sha256). */
  identical: boolean;
  hunks: Hunk[];
  summary: MachineSummary;
  unified?: string;
  /** Present when the answer was cut to the limits; says what was cut and how much there was. */
  truncated?: { hunks?: CountShown; lines?: CountShown; summary?: Record<string, CountShown> };
  /** Present when the work limit was reached: these regions are shown as replaced as a whole, not diffed block by block. */
  coarse?: { reason: string; regions: number; fromBlocks: number; toBlocks: number };
}

function sideInfo(bytes: Uint8Array, text: ProgramText, blocks: ComparedBlocks): ProgramSideInfo {
  return { blocks: blocks.ids.length, lines: text.count, bytes: bytes.byteLength, sha256: sha256Hex(bytes), encoding: text.encoding };
}

function cutList<T>(list: T[], max: number, name: string, cut: Record<string, CountShown>): T[] {
  if (list.length <= max) return list;
  cut[name] = { shown: max, total: list.length };
  return list.slice(0, max);
}

/** Diffs two stored program versions block by block; throws INVALID_PARAMETER for a bad option. */
export function diffPrograms(fromBytes: Uint8Array, toBytes: Uint8Array, input: DiffOptionsInput = {}): ProgramDiff {
  const options = resolveOptions(input);
  const fromText = readProgramText(fromBytes);
  const toText = readProgramText(toBytes);
  const dialect = resolveDialect(options.dialect, fromText, toText);
  const rules: CanonicalRules = { dialect, ignore: options.ignore, pointSignificant: dialect === 'iso' && !options.calculatorDecimalInput };
  const machine = machineRules(dialect, options.calculatorDecimalInput);
  const interner = new BlockInterner(rules, machine);
  // The interner's tables go on to the next diff, whatever happens here.
  try {
    const from = interner.blocks(fromText);
    const to = interner.blocks(toText);
    const diff = diffBlocks(from.ids, to.ids, interner.size, options.workLimit);
    const changes = changeRuns(diff.runs, from.ids.length, to.ids.length);

    const list = buildHunks(changes, { lineOf: from.lineOf, text: fromText }, { lineOf: to.lineOf, text: toText }, options.context, options.maxHunks, options.maxLines);
    const words = new BlockWords(
      (id) => interner.machineForm(id),
      (id, letters) => interner.machineFormMayContain(id, letters),
    );
    const full = summarise(
      changes,
      { ids: from.ids, words, facts: readProgramFacts(from.ids, words, dialect, changes, 'from'), lineOf: from.lineOf },
      { ids: to.ids, words, facts: readProgramFacts(to.ids, words, dialect, changes, 'to'), lineOf: to.lineOf },
      dialect,
    );
    const cut: Record<string, CountShown> = {};
    const max = options.maxSummaryItems;
    const summary: MachineSummary = {
      ...full,
      tools: { added: cutList(full.tools.added, max, 'tools.added', cut), removed: cutList(full.tools.removed, max, 'tools.removed', cut), changed: cutList(full.tools.changed, max, 'tools.changed', cut) },
      feeds: cutList(full.feeds, max, 'feeds', cut),
      spindleSpeeds: cutList(full.spindleSpeeds, max, 'spindleSpeeds', cut),
      workOffsets: { added: cutList(full.workOffsets.added, max, 'workOffsets.added', cut), removed: cutList(full.workOffsets.removed, max, 'workOffsets.removed', cut) },
      mCodes: { added: cutList(full.mCodes.added, max, 'mCodes.added', cut), removed: cutList(full.mCodes.removed, max, 'mCodes.removed', cut) },
    };

    const result: ProgramDiff = {
      dialect,
      from: sideInfo(fromBytes, fromText, from),
      to: sideInfo(toBytes, toText, to),
      identical: changes.length === 0,
      hunks: list.hunks,
      summary,
    };
    if (options.unified) {
      const missing = {
        fromLine: fromText.finalNewline ? 0 : fromText.count,
        toLine: toText.finalNewline ? 0 : toText.count,
      };
      result.unified = renderUnified(list.hunks, missing);
    }
    const truncated: NonNullable<ProgramDiff['truncated']> = {};
    if (list.hunks.length < list.totalHunks) truncated.hunks = { shown: list.hunks.length, total: list.totalHunks };
    if (list.shownLines < list.totalLines) truncated.lines = { shown: list.shownLines, total: list.totalLines };
    if (Object.keys(cut).length > 0) truncated.summary = cut;
    if (Object.keys(truncated).length > 0) result.truncated = truncated;
    if (diff.coarse.regions > 0) {
      result.coarse = { reason: `work limit of ${options.workLimit} reached: these regions are shown as replaced as a whole`, ...diff.coarse };
    }
    return result;
  } finally {
    interner.release();
  }
}

