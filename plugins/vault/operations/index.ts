/**
 * The vault's operations: libraries, programs, immutable versions and their
 * lifecycle (draft → submitted → published → obsolete), approvals with
 * separation of duties, and the NC-aware diff. docs/programs-vault.md.
 * One file per resource, each a table of operations made from the shared deps.
 */
import type { AnyRestOperation } from '../../../core/rest/operation.js';
import type { ProgramsContext } from '../../../core/roles/programs/context.js';
import type { VaultStore } from '../store.js';
import { APPROVAL_OPERATIONS } from './approvals.js';
import { vaultDeps } from './deps.js';
import { DIFF_OPERATIONS } from './diff.js';
import { LIBRARY_OPERATIONS } from './libraries.js';
import { PROGRAM_OPERATIONS } from './programs.js';
import { VERSION_OPERATIONS } from './versions.js';

export { MAX_VERSION_BYTES, UPLOAD_BODY_LIMIT } from './versions.js';

/** Every vault operation, in the order the OpenAPI document lists them. */
export function vaultOperations(ctx: ProgramsContext, store: VaultStore): AnyRestOperation[] {
  const deps = vaultDeps(ctx, store);
  return [...LIBRARY_OPERATIONS, ...PROGRAM_OPERATIONS, ...VERSION_OPERATIONS, ...APPROVAL_OPERATIONS, ...DIFF_OPERATIONS].map((make) => make(deps));
}
