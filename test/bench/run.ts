/**
 * `npm run bench -- <name> [options]`: runs one benchmark and prints its
 * figures as a table and as JSON. Benchmarks report numbers; they are not
 * tests and assert nothing except that their targets are printed beside them.
 */
const benches: Record<string, () => Promise<{ run(args: string[]): Promise<void> }>> = {
  fleet: () => import('./fleet.js'),
  mcp: () => import('./mcp.js'),
  analysis: () => import('./analysis.js'),
  modbus: () => import('./modbus.js'),
  'mtconnect-adapters': () => import('./mtconnect-adapters.js'),
  'body-flood': () => import('./body-flood.js'),
  audit: () => import('./audit.js'),
  'audit-scope': () => import('./audit-scope.js'),
  'programs-diff': () => import('./programs-diff.js'),
  programs: () => import('./programs.js'),
  deploy: () => import('./deploy.js'),
  'deploy-scale': () => import('./deploy-scale.js'),
  relay: () => import('./relay.js'),
  console: () => import('./console.js'),
  backup: () => import('./backup.js'),
  'rate-limit': () => import('./rate-limit.js'),
  mtconnect: () => import('./mtconnect.js'),
};

const [name, ...args] = process.argv.slice(2);
const load = name ? benches[name] : undefined;
if (!load) {
  process.stderr.write(`usage: npm run bench -- <${Object.keys(benches).join('|')}> [options]\n`);
  process.exit(2);
}
const bench = await load();
await bench.run(args);
