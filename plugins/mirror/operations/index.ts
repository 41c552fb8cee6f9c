/** The mirror's operations, one file per resource, each a table of operations made from the shared deps. */
import type { AnyRestOperation } from '../../../core/rest/operation.js';
import type { ProgramsContext } from '../../../core/roles/programs/context.js';
import type { Mirror } from '../mirror.js';
import type { MirrorRepository } from '../store.js';
import { mirrorDeps } from './deps.js';
import { DRIFT_OPERATIONS } from './drift.js';
import { FILE_OPERATIONS } from './files.js';
import { MACHINE_OPERATIONS } from './machines.js';

/** Every mirror operation, in the order the OpenAPI document lists them. */
export function mirrorOperations(ctx: ProgramsContext, repo: MirrorRepository, mirror: Mirror): AnyRestOperation[] {
  const deps = mirrorDeps(ctx, repo, mirror);
  return [...MACHINE_OPERATIONS, ...FILE_OPERATIONS, ...DRIFT_OPERATIONS].map((make) => make(deps));
}
