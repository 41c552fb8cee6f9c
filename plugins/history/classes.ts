/**
 * Which data classes a history read accepts: the classes the gateway writes
 * (always valid, even before the first row), plus any other class the table
 * holds for the machines asked about (written by an older version, or by a
 * plugin). Anything else is refused with the list of valid values.
 */
import type { Database } from '../../core/store/database.js';
import { GatewayError } from '../../core/interfaces/errors.js';
import { hasHistory, historyClasses } from '../../core/roles/gateway/history/catalog.js';
import { HISTORY_CLASSES } from '../../core/roles/gateway/fleet/machine-history.js';

export { HISTORY_CLASSES };

const KNOWN: ReadonlySet<string> = new Set(HISTORY_CLASSES);

/** The known classes plus those recorded for `machineIDs`, sorted. */
export async function acceptedClasses(db: Database, machineIDs: readonly string[]): Promise<string[]> {
  const found = new Set<string>(HISTORY_CLASSES);
  for (const id of machineIDs) for (const cls of await historyClasses(db, id)) found.add(cls);
  return [...found].sort();
}

/** Throws INVALID_PARAMETER naming `field` and the accepted classes unless each of `classes` is valid for `machineIDs`. */
export async function assertClasses(db: Database, field: string, classes: readonly string[], machineIDs: readonly string[]): Promise<void> {
  const unknown: string[] = [];
  for (const cls of classes) {
    if (KNOWN.has(cls)) continue;
    let present = false;
    for (const id of machineIDs) {
      if (await hasHistory(db, id, cls)) {
        present = true;
        break;
      }
    }
    if (!present) unknown.push(cls);
  }
  if (unknown.length === 0) return;
  const accepted = await acceptedClasses(db, machineIDs);
  const scope = machineIDs.length === 1 ? `machine '${machineIDs[0]}'` : 'these machines';
  throw new GatewayError(
    'INVALID_PARAMETER',
    `${field}: found ${unknown.map((c) => JSON.stringify(c)).join(', ')}; accepted: ${accepted.join(', ')} (the classes the gateway writes, plus those recorded for ${scope})`,
  );
}
