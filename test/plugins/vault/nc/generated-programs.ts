/**
 * Synthetic FANUC-style NC programs for the diff tests and benchmark: tool
 * changes with H/D offsets, feeds and speeds, work offsets, coolant, many
 * repeated short blocks and mostly distinct coordinate moves, comments, and
 * block numbers. Deterministic for a given seed.
 */

/** A small deterministic generator (LCG), so every run gets the same programs. */
export function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const coord = (rnd: () => number, span: number): string => (rnd() * span - span / 2).toFixed(3);

/** One plausible block, numbered `n` (or unnumbered when n is 0). */
export function randomBlock(rnd: () => number, n: number): string {
  const num = n > 0 ? `N${n} ` : '';
  const r = rnd();
  if (r < 0.5) return `${num}G1 X${coord(rnd, 200)} Y${coord(rnd, 150)}`;
  if (r < 0.6) return `${num}G1 X${coord(rnd, 200)} Y${coord(rnd, 150)} F${(200 + Math.floor(rnd() * 30) * 50)}.`;
  if (r < 0.7) return `${num}G2 X${coord(rnd, 200)} Y${coord(rnd, 150)} R${(rnd() * 20 + 1).toFixed(3)}`;
  if (r < 0.8) return `${num}G0 Z5.`;
  if (r < 0.88) return `${num}G1 Z-${(rnd() * 3).toFixed(2)} F150.`;
  if (r < 0.92) return `${num}G0 X${coord(rnd, 200)} Y${coord(rnd, 150)}`;
  if (r < 0.95) return '(FINISH PASS)';
  if (r < 0.97) return `${num}M8`;
  if (r < 0.985) return `${num}S${1000 + Math.floor(rnd() * 40) * 100} M3`;
  return `${num}G0 Z50. M9`;
}

/** A program of about `blocks` blocks with a tool change every `toolEvery` blocks. */
export function generateProgram(blocks: number, seed = 1, toolEvery = 2_000): string[] {
  const rnd = seeded(seed);
  const out = ['%', 'O1234 (BENCH PART)', '(POSTED FOR FANUC 0I-MF)', 'N1 G21 G17 G40 G49 G80 G90'];
  let n = 2;
  let tool = 1;
  while (out.length < blocks - 2) {
    if ((n - 2) % toolEvery === 0) {
      out.push(`(TOOL ${tool} - ENDMILL D${tool * 2}.)`);
      out.push(`N${n++} T${tool} M6`);
      out.push(`N${n++} G${54 + (tool % 3)} G90 G0 X0. Y0. S${3000 + tool * 100} M3`);
      out.push(`N${n++} G43 Z50. H${tool} M8`);
      out.push(`N${n++} G41 D${tool} G1 X10. F${600 + tool * 10}.`);
      tool++;
      continue;
    }
    out.push(randomBlock(rnd, n++));
  }
  out.push(`N${n} M30`, '%');
  return out;
}

/**
 * `lines` with about `fraction` of its blocks edited at scattered places: most
 * edits change a block, some insert a new one, some delete one. Returns the
 * edited program.
 */
export function editProgram(lines: readonly string[], fraction: number, seed = 2): string[] {
  const rnd = seeded(seed);
  const out: string[] = [];
  for (const line of lines) {
    if (line === '%' || rnd() >= fraction) {
      out.push(line);
      continue;
    }
    const r = rnd();
    if (r < 0.7) {
      // A changed value keeps the block number, as an edit on the control would.
      const m = /^(N\d+ )/.exec(line);
      out.push(`${m ? m[1] : ''}${randomBlock(rnd, 0)}`);
    } else if (r < 0.85) {
      out.push(line, randomBlock(rnd, 0));
    }
    // else: deleted
  }
  return out;
}
