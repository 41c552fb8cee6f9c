/**
 * What the accounts offer the service's other plugins, through the role's
 * service registry: which accounts lie within a caller, by the grant rule of
 * grants.ts. The audit shows a scoped caller the records about those
 * accounts only (docs/audit.md, "Scopes"). Declared by declaration merging,
 * so a consumer needs no import of this plugin.
 */
import type { RestPrincipal } from '../../core/rest/operation.js';
import { grantorOf, holdsWithin } from './grants.js';
import type { AccountStore } from './store.js';

export interface AccountGrants {
  /** The ids of the users and of the service tokens whose role and scopes lie within the caller's (the ones its account lists show). */
  accountsWithin(principal: RestPrincipal): Promise<{ users: string[]; serviceTokens: string[] }>;
}

declare module '../../core/roles/programs/context.js' {
  interface ProgramsServices {
    'accounts.grants': AccountGrants;
  }
}

const PAGE = 1000;

type Rights = Parameters<typeof holdsWithin>[1] & { id: string };

/** The ids of the accounts of a list read by id pages that `keep` keeps. */
async function idsOf(list: (limit: number, afterId: string | null) => Promise<Rights[]>, keep: (account: Rights) => boolean): Promise<string[]> {
  const ids: string[] = [];
  for (let after: string | null = null; ;) {
    const rows = await list(PAGE, after);
    for (const row of rows) if (keep(row)) ids.push(row.id);
    if (rows.length < PAGE) return ids;
    after = (rows[rows.length - 1] as Rights).id;
  }
}

export function accountGrants(store: AccountStore): AccountGrants {
  return {
    async accountsWithin(principal) {
      const grantor = grantorOf(principal);
      const within = (account: Rights) => holdsWithin(grantor, account);
      const [users, serviceTokens] = await Promise.all([idsOf((limit, after) => store.listUsers(limit, after), within), idsOf((limit, after) => store.listTokens(limit, after), within)]);
      return { users, serviceTokens };
    },
  };
}
