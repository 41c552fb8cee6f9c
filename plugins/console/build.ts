/**
 * Builds the web consoles (plugins/console/web/) into plugins/console/dist/,
 * with esbuild: one bundle per console, minified, content-hashed names, a
 * gzip copy of each asset, and a manifest. Runs during `npm ci` (the
 * `prepare` script), at `npm start` when the sources changed since, and on a
 * console's first request otherwise; plants are often offline, so every
 * asset the consoles use is in these bundles (no CDN, no web fonts).
 *
 * The output goes to a directory named after a hash of the sources, made
 * under a temporary name and renamed into place, so that processes building
 * at the same time (test workers, two roles) never see half a build.
 *
 *   node --import tsx plugins/console/build.ts     (npm run build:console)
 *   node dist/plugins/console/build.js             (in npm run build)
 *
 * Compiled (dist/plugins/console/build.js) it reads the sources of the
 * package's source tree and builds into dist/plugins/console/dist, so
 * `npm run build` leaves dist/ with the consoles prebuilt. Where no sources
 * are (an installation of dist/ alone), the prebuilt consoles are served as
 * they are and never rebuilt.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { PACKAGE_ROOT } from '../../core/runtime/package-root.js';

const HERE = dirname(fileURLToPath(import.meta.url));
/** The consoles' sources: beside this file in the source tree; from dist/, in the package's source tree when it has one. */
export const WEB_DIR = [join(HERE, 'web'), join(PACKAGE_ROOT, 'plugins', 'console', 'web')].find((dir) => existsSync(dir)) ?? join(HERE, 'web');
export const DIST_DIR = join(HERE, 'dist');

/** The consoles: entry point under web/, the page title, and the workers the page starts (name → entry). */
export const CONSOLES: Record<string, { entry: string; title: string; workers?: Record<string, string> }> = {
  gateway: { entry: 'gateway/main.tsx', title: 'Machine gateway — fleet', workers: { fleet: 'gateway/fleet-worker.ts' } },
  programs: { entry: 'programs/main.tsx', title: 'Program version service' },
  terminal: { entry: 'terminal/main.tsx', title: 'Machine terminal' },
};
export type ConsoleName = 'gateway' | 'programs' | 'terminal';

/** One built asset as served. */
export interface BuiltAsset {
  file: string;
  contentType: string;
  bytes: number;
  gzipBytes: number;
}

export interface ConsoleManifest {
  sourceHash: string;
  builtAt: string;
  /** Per console: its script, style and workers' file names. */
  consoles: Record<string, { script: string; style: string | null; workers: Record<string, string> }>;
  assets: Record<string, BuiltAsset>;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else out.push(path);
  }
  return out;
}

/** A hash of everything a build depends on: the sources, this file, and the versions of esbuild and preact. */
export function sourceHash(): string {
  const hash = createHash('sha256');
  for (const file of [...sourceFiles(WEB_DIR), fileURLToPath(import.meta.url)]) {
    hash.update(relative(HERE, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  for (const pkg of ['esbuild', 'preact']) {
    try {
      hash.update(readFileSync(join(HERE, '..', '..', 'node_modules', pkg, 'package.json')));
    } catch {
      // A missing package fails the build itself, with esbuild's message.
    }
  }
  return hash.digest('hex').slice(0, 16);
}

const TYPES: Record<string, string> = { '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8', '.map': 'application/json' };

async function buildInto(dir: string, hash: string): Promise<ConsoleManifest> {
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: Object.fromEntries(Object.entries(CONSOLES).flatMap(([name, c]) => [
      [name, join(WEB_DIR, c.entry)],
      ...Object.entries(c.workers ?? {}).map(([w, entry]) => [`${name}-worker-${w}`, join(WEB_DIR, entry)]),
    ])),
    bundle: true,
    minify: true,
    format: 'esm',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    outdir: dir,
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const consoles: ConsoleManifest['consoles'] = {};
  const assets: ConsoleManifest['assets'] = {};
  for (const [out, meta] of Object.entries(result.metafile.outputs)) {
    const file = relative(dir, out);
    const bytes = readFileSync(out);
    const gz = gzipSync(bytes, { level: 9 });
    writeFileSync(`${out}.gz`, gz);
    const ext = file.slice(file.lastIndexOf('.'));
    assets[file] = { file, contentType: TYPES[ext] ?? 'application/octet-stream', bytes: bytes.length, gzipBytes: gz.length };
    const name = Object.entries(CONSOLES).find(([, c]) => meta.entryPoint?.endsWith(c.entry))?.[0];
    if (name) consoles[name] = { script: file, style: meta.cssBundle ? relative(dir, meta.cssBundle) : null, workers: consoles[name]?.workers ?? {} };
  }
  // Each worker's file, under its console.
  for (const [out, meta] of Object.entries(result.metafile.outputs)) {
    for (const [name, c] of Object.entries(CONSOLES)) {
      for (const [w, entry] of Object.entries(c.workers ?? {})) {
        const owner = consoles[name];
        if (owner && meta.entryPoint?.endsWith(entry)) owner.workers[w] = relative(dir, out);
      }
    }
  }
  const manifest: ConsoleManifest = { sourceHash: hash, builtAt: new Date().toISOString(), consoles, assets };
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return manifest;
}

/** The one prebuilt build in DIST_DIR, for an installation without the sources. */
function prebuilt(): { dir: string; manifest: ConsoleManifest } {
  const found = existsSync(DIST_DIR) ? readdirSync(DIST_DIR).filter((name) => !name.startsWith('.') && existsSync(join(DIST_DIR, name, 'manifest.json'))) : [];
  if (found.length !== 1) {
    throw new Error(`the web consoles' sources are not at ${WEB_DIR} and ${found.length ? 'several builds are' : 'no build is'} in ${DIST_DIR}: run npm run build where the sources are`);
  }
  const dir = join(DIST_DIR, found[0] as string);
  return { dir, manifest: JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as ConsoleManifest };
}

/** The built consoles for the current sources: built now if they are not yet (or the prebuilt ones where no sources are). */
export async function ensureBuilt(): Promise<{ dir: string; manifest: ConsoleManifest }> {
  if (!existsSync(WEB_DIR)) return prebuilt();
  const hash = sourceHash();
  const dir = join(DIST_DIR, hash);
  const manifestFile = join(dir, 'manifest.json');
  if (existsSync(manifestFile)) return { dir, manifest: JSON.parse(readFileSync(manifestFile, 'utf8')) as ConsoleManifest };
  mkdirSync(DIST_DIR, { recursive: true });
  const temp = join(DIST_DIR, `.building-${hash}-${process.pid}-${Date.now()}`);
  try {
    const manifest = await buildInto(temp, hash);
    try {
      renameSync(temp, dir);
    } catch (err) {
      // Another process finished the same build first: theirs is as good.
      if (!existsSync(manifestFile)) throw err;
    }
    // Older builds go; only the current one is served.
    for (const name of readdirSync(DIST_DIR)) if (name !== hash && !name.startsWith('.building-')) rmSync(join(DIST_DIR, name), { recursive: true, force: true });
    return { dir, manifest: existsSync(manifestFile) ? (JSON.parse(readFileSync(manifestFile, 'utf8')) as ConsoleManifest) : manifest };
  } finally {
    rmSync(temp, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const started = Date.now();
  const { manifest } = await ensureBuilt();
  const sizes = Object.values(manifest.assets).filter((a) => !a.file.endsWith('.map')).map((a) => `${a.file} ${(a.bytes / 1024).toFixed(1)} KiB (${(a.gzipBytes / 1024).toFixed(1)} KiB gzipped)`);
  process.stdout.write(`consoles built in ${Date.now() - started} ms (${manifest.sourceHash}):\n  ${sizes.join('\n  ')}\n`);
}
