/**
 * Names for the ids an audit record or a list carries: machines, programs,
 * libraries, gateways and groups from their lists, versions as "program vN".
 * Kinds the caller's role cannot list (users without `users.manage`) keep
 * their id, so reading names never makes a refused request.
 */
import { api } from './api.js';
import type { Page } from './model.js';

interface Named { id: string; name: string }
interface VersionRef { id: string; programId: string; number: number }

/** id → name for every id in `ids` that could be named; `machineIds` also maps a machine's gateway ID (L01) to its name. */
export async function namesFor(ids: readonly string[], permissions: readonly string[]): Promise<Map<string, string>> {
  const list = <T extends Named>(path: string) => api.get<Page<T>>(`${path}?limit=1000`).then((p) => p.items, () => [] as T[]);
  const wants = (prefix: string) => ids.some((id) => id.startsWith(prefix));
  const [machines, programs, libraries, gateways, groups, users] = await Promise.all([
    list<Named & { machineId: string }>('/machines'), list('/programs'), wants('lib_') ? list('/libraries') : [], wants('gw_') ? list('/gateways') : [],
    wants('grp_') ? list('/machine-groups') : [],
    wants('usr_') && permissions.includes('users.manage') ? api.get<Page<{ id: string; username: string }>>('/admin/users?limit=1000').then((p) => p.items.map((u) => ({ id: u.id, name: u.username })), () => []) : [],
  ]);
  const names = new Map<string, string>();
  for (const x of [...machines, ...programs, ...libraries, ...gateways, ...groups, ...users]) names.set(x.id, x.name);
  for (const m of machines) names.set(m.machineId, m.name);
  const programName = new Map(programs.map((p) => [p.id, p.name]));
  const versionIds = [...new Set(ids.filter((id) => id.startsWith('ver_')))].slice(0, 100);
  const versions = await Promise.all(versionIds.map((id) => api.get<VersionRef>(`/versions/${id}`).catch(() => null)));
  for (const v of versions) if (v) names.set(v.id, `${programName.get(v.programId) ?? 'program'} v${v.number}`);
  return names;
}
