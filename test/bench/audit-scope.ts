/**
 * The audit as scoped callers read it, on a program service with every
 * plugin and a temp database: `--records` records (default 300,000) about
 * 5,000 programs with 20,000 versions in 50 libraries, 200 machines in 20
 * groups, deployments, users and libraries, written straight to the tables.
 * Measured for an unscoped caller and three scoped ones: the first page of
 * 100 (median of `--runs`) and the whole CSV export.
 *
 *   npm run bench -- audit-scope [--records 300000] [--runs 5]
 */
import { loadavg } from 'node:os';
import type { RestPrincipal } from '../../core/rest/operation.js';
import { auditScope } from '../../plugins/audit-api/scope.js';
import { PROGRAMS_PLUGINS } from '../../core/roles/programs/compose.js';
import { startTestProgramService } from '../fixtures/programs.js';
import { option, percentile, printTable } from './stats.js';

const hex = (n: number) => n.toString(16).padStart(16, '0');
const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}_${hex(i)}`);
const KINDS = ['program', 'version', 'deployment', 'machine', 'user', 'library'] as const;

function principal(libraries: string[] | '*', machineGroups: string[] | '*'): RestPrincipal {
  return { kind: 'user', id: 'usr_bench', name: 'bench', role: 'admin', permissions: new Set(), scopes: { libraries, machineGroups }, authMethod: 'session', onBehalfOf: null, requiresOperator: false };
}

export async function run(args: string[]): Promise<void> {
  const records = option(args, 'records', 300_000);
  const runs = option(args, 'runs', 5);
  const svc = await startTestProgramService({ plugins: PROGRAMS_PLUGINS.filter((p) => p.name !== 'programs-console'), env: { PROGRAMS_ADMIN_PASSWORD: 'bench-admin-password' } });
  try {
    const { db, audit } = svc.role.context;
    const [libs, progs, vers, machines, groups] = [ids('lib', 50), ids('prg', 5000), ids('ver', 20_000), ids('mch', 200), ids('grp', 20)];
    await db.write(async (tx) => {
      for (const l of libs) await tx.run("INSERT INTO vault_libraries VALUES (?, ?, ?, '', 'autoRelease', 0, '[]', 'bench', 0)", [l, l, l]);
      for (const [i, p] of progs.entries()) await tx.run("INSERT INTO vault_programs VALUES (?, ?, ?, ?, 'fanuc', '', 'bench', 0, 0)", [p, libs[i % libs.length] as string, p, p]);
      for (const [i, v] of vers.entries()) {
        await tx.run("INSERT INTO vault_versions (id, program_id, number, sha256, size, content, notes, author, state, created_at) VALUES (?, ?, ?, '', 0, x'', '', 'bench', 'published', 0)", [v, progs[i % progs.length] as string, i]);
      }
      await tx.run("INSERT INTO fleet_gateways VALUES ('gtw_bench', 'bench', 'bench', 'http', 'http://bench', NULL, 'bench', 0, NULL, NULL, NULL, NULL)");
      for (const m of machines) await tx.run("INSERT INTO fleet_machines VALUES (?, 'gtw_bench', ?, ?, 'sim', '', '', '', 1, 1, '', NULL, 0, 60, 0, 0)", [m, m, m]);
      for (const g of groups) await tx.run("INSERT INTO fleet_groups VALUES (?, ?, NULL, NULL, '', 0, 0)", [g, g]);
      for (const [i, m] of machines.entries()) await tx.run('INSERT INTO fleet_group_members VALUES (?, ?)', [groups[i % groups.length] as string, m]);
    }, { transaction: true });
    for (let done = 0; done < records; done += 5000) {
      const entries = Array.from({ length: Math.min(5000, records - done) }, (_, j) => {
        const n = done + j;
        const kind = KINDS[n % KINDS.length] as (typeof KINDS)[number];
        const pick = { program: progs, version: vers, library: libs, machine: machines, user: ['usr_bench'], deployment: [`dep_${hex(n)}`] }[kind];
        const entityId = pick[n % pick.length] as string;
        return { principalName: 'bench', authMethod: 'session', category: 'bench', action: `${kind}.bench`, entityType: kind, entityId, machine: kind === 'deployment' ? (machines[n % machines.length] as string) : null, details: { n } };
      });
      await db.write((tx) => audit.appendMany(tx, entries), { transaction: true });
    }
    const rows: [string, string, string][] = [];
    const callers: [string, RestPrincipal][] = [
      ['unscoped', principal('*', '*')], ['5 of 50 libraries, 2 of 20 groups', principal(libs.slice(0, 5), groups.slice(0, 2))],
      ['1 library, no group', principal(libs.slice(0, 1), [])], ['nothing in scope', principal([], [])],
    ];
    for (const [name, p] of callers) {
      const scope = await auditScope(svc.role.context, p);
      const filter = scope ? { scope } : {};
      const times: number[] = [];
      for (let i = 0; i < runs; i++) {
        const t = performance.now();
        await audit.query(filter, { limit: 100 });
        times.push(performance.now() - t);
      }
      const t = performance.now();
      let exported = -1;
      for await (const chunk of audit.exportCsv(filter)) exported += chunk.split('\r\n').length - 1;
      rows.push([`${name}: first page of 100, median ms`, percentile(times, 50).toFixed(1), '']);
      rows.push([`${name}: export of ${exported} records, ms`, (performance.now() - t).toFixed(0), '']);
    }
    printTable(`audit in scope, ${records} records (load ${loadavg().map((l) => l.toFixed(1)).join(' ')})`, rows);
    process.stdout.write(`${JSON.stringify({ records, rows: Object.fromEntries(rows.map((r) => [r[0], Number(r[1])])) })}\n`);
  } finally {
    await svc.stop();
  }
}
