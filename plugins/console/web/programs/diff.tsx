/**
 * The diff of two versions, side by side: every line compared as written
 * (comment-only lines included), removed lines on the left, added ones on
 * the right, three unchanged lines around each change and every other
 * unchanged run folded as `diff -u` folds it, one click from being shown;
 * above it, what changes on the machine (tools, feeds, spindle speeds, work
 * offsets, M-codes) highlighted.
 */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { LINES_AT_ONCE, linesOf } from './version-text.js';
export interface DiffLine { op: ' ' | '-' | '+'; fromLine?: number; toLine?: number; text: string }
export interface ValueChange { line: number; fromLine: number; from: number | string | null; to: number | string | null; changePercent: number | null }
export interface Diff {
  identical: boolean;
  from: { number: number; blocks: number; lines: number };
  to: { number: number; blocks: number; lines: number };
  hunks: { fromStart: number; toStart: number; lines: DiffLine[]; cut?: true }[];
  summary: {
    tools: { added: string[]; removed: string[]; changed: { tool: string; from: string[]; to: string[] }[] };
    feeds: ValueChange[];
    spindleSpeeds: ValueChange[];
    workOffsets: { added: { code: string; line: number }[]; removed: { code: string; line: number }[] };
    mCodes: { added: { code: string; line: number }[]; removed: { code: string; line: number }[] };
    blocksChanged: number;
    blocksAdded: number;
    blocksRemoved: number;
  };
}

/** Pairs a run of removed lines with the run of added lines after it, row by row. */
function rows(lines: DiffLine[]): { left: DiffLine | null; right: DiffLine | null }[] {
  const out: { left: DiffLine | null; right: DiffLine | null }[] = [];
  for (let i = 0; i < lines.length; ) {
    const line = lines[i] as DiffLine;
    if (line.op === ' ') {
      out.push({ left: line, right: line });
      i++;
      continue;
    }
    const removed: DiffLine[] = [];
    const added: DiffLine[] = [];
    while (i < lines.length && lines[i]?.op === '-') removed.push(lines[i++] as DiffLine);
    while (i < lines.length && lines[i]?.op === '+') added.push(lines[i++] as DiffLine);
    for (let k = 0; k < Math.max(removed.length, added.length); k++) out.push({ left: removed[k] ?? null, right: added[k] ?? null });
  }
  return out;
}

const change = (c: ValueChange) => `${c.from ?? '—'} → ${c.to ?? '—'}${c.changePercent !== null ? ` (${c.changePercent > 0 ? '+' : ''}${c.changePercent.toFixed(1)} %)` : ''} at line ${c.line}`;

/** A tool as the plant says it: T2 (the summary gives the number alone). */
const tool = (t: string) => (/^\d+$/.test(t) ? `T${t}` : t);

export function MachineSummary({ summary }: { summary: Diff['summary'] }) {
  const items: [string, string[]][] = [
    ['Tools added', summary.tools.added.map(tool)],
    ['Tools removed', summary.tools.removed.map(tool)],
    ['Tools changed', summary.tools.changed.map((t) => `${tool(t.tool)}: ${t.from.join(' ')} → ${t.to.join(' ')}`)],
    ['Feeds', summary.feeds.map(change)],
    ['Spindle speeds', summary.spindleSpeeds.map(change)],
    ['Work offsets added', summary.workOffsets.added.map((o) => `${o.code} (line ${o.line})`)],
    ['Work offsets removed', summary.workOffsets.removed.map((o) => `${o.code} (line ${o.line})`)],
    ['M-codes added', summary.mCodes.added.map((o) => `${o.code} (line ${o.line})`)],
    ['M-codes removed', summary.mCodes.removed.map((o) => `${o.code} (line ${o.line})`)],
  ];
  const shown = items.filter(([, v]) => v.length > 0);
  return (
    <section class="machine-summary" aria-label="What changes on the machine">
      <p><b>{summary.blocksChanged}</b> blocks changed, <b>{summary.blocksAdded}</b> added, <b>{summary.blocksRemoved}</b> removed.</p>
      {shown.length === 0 ? <p>No tool, feed, speed, offset or M-code changes.</p> : (
        <dl class="changes">{shown.map(([k, v]) => <Fragment key={k}><dt>{k}</dt><dd>{v.map((x, i) => <mark key={i}>{x}</mark>)}</dd></Fragment>)}</dl>
      )}
    </section>
  );
}

/** An unchanged run between two hunks (or before the first, after the last), folded until shown. */
interface Fold { fromLine: number; toLine: number; count: number }

/** The folds around `hunks`, for programs of `fromLines` lines; hunks list every line they hold (compare=lines). */
function foldsOf(hunks: Diff['hunks'], fromLines: number): { before: Fold[]; after: Fold } {
  const before: Fold[] = [];
  let from = 0;
  let to = 0;
  for (const h of hunks) {
    const first = h.lines.find((l) => l.fromLine !== undefined)?.fromLine ?? from + 1;
    const firstTo = h.lines.find((l) => l.toLine !== undefined)?.toLine ?? to + 1;
    before.push({ fromLine: from + 1, toLine: to + 1, count: Math.max(0, Math.min(first - from - 1, firstTo - to - 1)) });
    for (const l of h.lines) {
      if (l.fromLine !== undefined) from = Math.max(from, l.fromLine);
      if (l.toLine !== undefined) to = Math.max(to, l.toLine);
    }
  }
  return { before, after: { fromLine: from + 1, toLine: to + 1, count: Math.max(0, fromLines - from) } };
}

/** A fold: its first `shown` lines drawn (a page at a time, LINES_AT_ONCE), the rest behind a button. */
function FoldRows({ fold, lines, shown, onShow }: { fold: Fold; lines: string[] | null; shown: number; onShow: (n: number) => void }) {
  if (fold.count === 0) return null;
  const drawn = lines ? Math.min(shown, fold.count) : 0;
  const left = fold.count - drawn;
  const first = fold.fromLine + drawn;
  return (
    <>
      {drawn > 0 && (
        <tbody class="unfolded">{Array.from({ length: drawn }, (_, k) => (
          <tr key={k}><td class="ln">{fold.fromLine + k}</td><td>{lines?.[fold.fromLine + k - 1]}</td><td class="ln">{fold.toLine + k}</td><td>{lines?.[fold.fromLine + k - 1]}</td></tr>
        ))}</tbody>
      )}
      {left > 0 && (
        <tbody class="fold"><tr><td colSpan={4}>
          {lines ? <button type="button" class="small" onClick={() => onShow(drawn + LINES_AT_ONCE)}>Show {Math.min(left, LINES_AT_ONCE)} unchanged {left === 1 ? 'line' : 'lines'} ({first}–{first + Math.min(left, LINES_AT_ONCE) - 1}{left > LINES_AT_ONCE ? ` of ${left}` : ''})</button> : `${left} unchanged lines`}
        </td></tr></tbody>
      )}
    </>
  );
}

/** The diff; `fromText` (the older version's whole text) lets the folded runs be shown. */
export function DiffView({ diff, fromText }: { diff: Diff; fromText?: string | null }) {
  const [shown, setShown] = useState<Map<number, number>>(new Map());
  if (diff.identical) return <p>Versions {diff.from.number} and {diff.to.number} are the same text, line for line.</p>;
  const lines = fromText ? linesOf(fromText).map((l) => l.body) : null;
  const folds = foldsOf(diff.hunks, lines?.length ?? diff.from.lines);
  const show = (i: number) => (n: number) => setShown(new Map([...shown, [i, n]]));
  return (
    <div class="diff">
      <MachineSummary summary={diff.summary} />
      <table class="side-by-side" aria-label={`Version ${diff.from.number} against version ${diff.to.number}`}>
        {/* A fixed layout takes its widths from the first row, whose cells span two columns: the columns say theirs. */}
        <colgroup><col class="ln" /><col /><col class="ln" /><col /></colgroup>
        <thead><tr><th scope="col" colSpan={2}>Version {diff.from.number}</th><th scope="col" colSpan={2}>Version {diff.to.number}</th></tr></thead>
        {diff.hunks.map((h, hi) => (
          <Fragment key={hi}>
            <FoldRows fold={folds.before[hi] as Fold} lines={lines} shown={shown.get(hi) ?? 0} onShow={show(hi)} />
            <tbody>
              {rows(h.lines).map((r, i) => (
                <tr key={i}>
                  <td class="ln">{r.left?.fromLine ?? ''}</td>
                  <td class={r.left?.op === '-' ? 'del' : r.left ? '' : 'empty'}>{r.left?.op === '-' && <span class="visually-hidden">removed: </span>}{r.left?.text ?? ''}</td>
                  <td class="ln">{r.right?.toLine ?? ''}</td>
                  <td class={r.right?.op === '+' ? 'add' : r.right ? '' : 'empty'}>{r.right?.op === '+' && <span class="visually-hidden">added: </span>}{r.right?.text ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </Fragment>
        ))}
        <FoldRows fold={folds.after} lines={lines} shown={shown.get(-1) ?? 0} onShow={show(-1)} />
      </table>
    </div>
  );
}

/** A unified diff text (the drift items' form) with its lines marked. */
export function UnifiedView({ text }: { text: string }) {
  return (
    <pre class="unified" aria-label="Differences">
      {text.split('\n').map((l, i) => <span key={i} class={l.startsWith('+') && !l.startsWith('+++') ? 'add' : l.startsWith('-') && !l.startsWith('---') ? 'del' : ''}>{l}{'\n'}</span>)}
    </pre>
  );
}
