/**
 * The machine facts as they were read before the summary read feeds and
 * speeds only around the changes: one pass over every block of a program,
 * the modal F and S after each block and the tools. Kept unchanged as the
 * oracle the fast path is checked against (program-facts.test.ts).
 */
import { programValue, type BlockWords, type ModalValues, type ProgramFacts } from '../../../../plugins/vault/nc/machine-facts.js';
import type { Dialect } from '../../../../plugins/vault/nc/options.js';

const TOOL_CALL = /^TOOL CALL ?("[^"]*"|\d+(?:\.\d+)?)? ?([UVWXYZ](?![A-Z]))?/;
const OVERSIZE = /(DL|DR2|DR)([+-]?\d*\.?\d+)/g;

const isM6 = ([letter, index, text]: [string, string, string]): boolean => letter === 'M' && index === '' && Number(text) === 6;

/** Reads feeds, speeds and tools from a program given as canonical block ids. */
export function readProgramFacts(ids: Int32Array, words: BlockWords, dialect: Dialect): ProgramFacts {
  const n = ids.length;
  const feedAt = new Int32Array(n);
  const speedAt = new Int32Array(n);
  const feed: ModalValues = { at: feedAt, values: [] };
  const speed: ModalValues = { at: speedAt, values: [] };
  const toolData = new Map<string, Set<string>>();
  let usesM6 = false;
  if (dialect !== 'heidenhain') for (let i = 0; i < n && !usesM6; i++) usesM6 = words.of(ids[i] as number).some(isM6);
  let f = -1;
  let s = -1;
  let pending: string | null = null;
  let active: string | null = null;
  const note = (tool: string | null, item: string | null): void => {
    if (tool === null) return;
    let set = toolData.get(tool);
    if (!set) toolData.set(tool, (set = new Set()));
    if (item !== null) set.add(item);
  };
  for (let i = 0; i < n; i++) {
    const id = ids[i] as number;
    const list = words.of(id);
    if (dialect === 'heidenhain') {
      const c = words.toolCall(id);
      if (c !== undefined) {
        const call = TOOL_CALL.exec(c);
        if (call?.[1] !== undefined) active = String(programValue(call[1]));
        note(active, call?.[2] !== undefined ? `axis ${call[2]}` : null);
        OVERSIZE.lastIndex = 0;
        for (let m = OVERSIZE.exec(c); m !== null; m = OVERSIZE.exec(c)) note(active, `${m[1]}${Number(m[2])}`);
      }
    }
    // H and D in the block that names a tool belong to that tool (`T5 D1`, before its M6); elsewhere to the tool in the spindle.
    let owner = active;
    for (const word of list) {
      const [letter, , text] = word;
      if (letter === 'F') f = feed.values.push(programValue(text)) - 1;
      // Siemens `S1=..` names a spindle; one spindle is assumed, the index is dropped.
      else if (letter === 'S') s = speed.values.push(programValue(text)) - 1;
      else if (dialect === 'heidenhain') continue;
      else if (letter === 'T') {
        pending = String(programValue(text));
        owner = pending;
        if (!usesM6) active = pending;
        note(pending, null);
      } else if (isM6(word)) active = pending;
      else if (letter === 'H' && dialect === 'iso') note(owner, `H${text}`);
      else if (letter === 'D') note(owner, `D${text}`);
    }
    feedAt[i] = f;
    speedAt[i] = s;
  }
  const tools = new Map<string, string[]>();
  for (const [tool, set] of toolData) tools.set(tool, [...set].sort());
  return { feed, speed, tools };
}
