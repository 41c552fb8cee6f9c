/**
 * NC diff benchmark: two generated FANUC-style programs of 100,000 blocks
 * (tool changes with H/D offsets, feeds, speeds, work offsets, coolant, many
 * repeated short blocks, comments), the second with 1% of its blocks edited at
 * scattered places (70% changed, 15% inserted, 15% deleted). Times
 * diffPrograms (bytes in, full result out: hunks, summary, unified text) and
 * the system's `diff -u` on the same files, spawned and timed the same way,
 * alternating with ours so both see the same load, and gives their ratio.
 * Also: plain Myers over the same block ids, no anchors (what the anchoring
 * saves), and two unrelated 100,000-block programs (the bounded worst case).
 *
 *   npm run bench -- programs-diff [--blocks 100000] [--runs 30] [--edits 0.01]
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BlockInterner } from '../../plugins/vault/nc/block-interner.js';
import { machineRules } from '../../plugins/vault/nc/blocks.js';
import { diffPrograms } from '../../plugins/vault/nc/index.js';
import { myersRuns } from '../../plugins/vault/nc/myers.js';
import { readProgramText } from '../../plugins/vault/nc/program-text.js';
import { editProgram, generateProgram } from '../plugins/vault/nc/generated-programs.js';
import { option, percentile, printTable } from './stats.js';

const TARGET_P95_MS = 300;

function timeDiffU(a: string, b: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn('diff', ['-u', a, b], { stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.resume(); // read and drop the output, as a caller would read it
    child.on('error', reject);
    child.on('close', (code) => (code === 2 ? reject(new Error('diff failed')) : resolve(performance.now() - started)));
  });
}

const ms = (v: number): string => `${v.toFixed(1)} ms`;

export async function run(args: string[]): Promise<void> {
  const blocks = option(args, 'blocks', 100_000);
  const runs = option(args, 'runs', 30);
  const fraction = option(args, 'edits', 0.01);
  const from = generateProgram(blocks, 1);
  const to = editProgram(from, fraction, 2);
  const fromBytes = Buffer.from(`${from.join('\n')}\n`);
  const toBytes = Buffer.from(`${to.join('\n')}\n`);
  const dir = mkdtempSync(join(tmpdir(), 'nc-diff-bench-'));
  const fa = join(dir, 'from.nc');
  const fb = join(dir, 'to.nc');
  writeFileSync(fa, fromBytes);
  writeFileSync(fb, toBytes);
  const loadBefore = loadavg()[0] as number;
  try {
    for (let i = 0; i < 3; i++) diffPrograms(fromBytes, toBytes, { unified: true });
    // Ours and diff -u alternate, so that both see the same load on a shared machine.
    await timeDiffU(fa, fb);
    const ours: number[] = [];
    const oursCpu: number[] = [];
    const theirs: number[] = [];
    let result = diffPrograms(fromBytes, toBytes, { unified: true });
    for (let i = 0; i < runs; i++) {
      const started = performance.now();
      const cpu = process.cpuUsage();
      result = diffPrograms(fromBytes, toBytes, { unified: true });
      ours.push(performance.now() - started);
      const used = process.cpuUsage(cpu);
      oursCpu.push((used.user + used.system) / 1000);
      theirs.push(await timeDiffU(fa, fb));
    }

    // Plain Myers over the same canonical ids, no prefix trimming or anchors, for comparison.
    const rules = machineRules('iso', false);
    const interner = new BlockInterner(rules, rules);
    const a = interner.blocks(readProgramText(fromBytes)).ids;
    const b = interner.blocks(readProgramText(toBytes)).ids;
    const plain: number[] = [];
    let plainOk = true;
    for (let i = 0; i < Math.min(runs, 5); i++) {
      const started = performance.now();
      plainOk = myersRuns(a, 0, a.length, b, 0, b.length, 20_000, { left: 1e12 }, []);
      plain.push(performance.now() - started);
    }

    const x = generateProgram(blocks, 11);
    const y = generateProgram(blocks, 12);
    const xb = Buffer.from(`${x.join('\n')}\n`);
    const yb = Buffer.from(`${y.join('\n')}\n`);
    const unrelatedStart = performance.now();
    const unrelated = diffPrograms(xb, yb);
    const unrelatedMs = performance.now() - unrelatedStart;

    const p50 = percentile(ours, 50);
    const p95 = percentile(ours, 95);
    const d50 = percentile(theirs, 50);
    const d95 = percentile(theirs, 95);
    const s = result.summary;
    const rows: [string, string, string][] = [
      ['blocks from / to', `${result.from.blocks} / ${result.to.blocks}`, `${blocks}, ${fraction * 100}% edited`],
      ['bytes from / to', `${result.from.bytes} / ${result.to.bytes}`, ''],
      ['changed / added / removed', `${s.blocksChanged} / ${s.blocksAdded} / ${s.blocksRemoved}`, ''],
      ['hunks', `${result.hunks.length}`, ''],
      ['diffPrograms p50', ms(p50), ''],
      ['diffPrograms p95', ms(p95), `≤ ${TARGET_P95_MS} ms`],
      ['diffPrograms CPU time p50 / p95', `${ms(percentile(oursCpu, 50))} / ${ms(percentile(oursCpu, 95))}`, 'wall time minus waiting for a core'],
      ['diff -u p50 (spawned)', ms(d50), ''],
      ['diff -u p95 (spawned)', ms(d95), ''],
      ['ratio p50 / p95 (ours ÷ diff -u)', `${(p50 / d50).toFixed(2)} / ${(p95 / d95).toFixed(2)}`, ''],
      ['plain Myers on ids p50', plainOk ? ms(percentile(plain, 50)) : 'gave up', 'comparison only'],
      ['unrelated programs', ms(unrelatedMs), `coarse regions ${unrelated.coarse?.regions ?? 0}`],
      ['load average 1 min before / after', `${loadBefore.toFixed(2)} / ${(loadavg()[0] as number).toFixed(2)}`, ''],
    ];
    printTable(`NC diff, ${runs} runs`, rows);
    process.stdout.write(`${JSON.stringify({ bench: 'programs-diff', blocks, fraction, runs, p50, p95, cpu: { p50: percentile(oursCpu, 50), p95: percentile(oursCpu, 95) }, diffU: { p50: d50, p95: d95 }, ratio: { p50: p50 / d50, p95: p95 / d95 }, plainMyersP50: plainOk ? percentile(plain, 50) : null, unrelatedMs, coarse: unrelated.coarse ?? null, loadavg: loadavg() })}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
