/**
 * A stable phase in [0, interval) derived from an ID (FNV-1a), so that a large
 * fleet of machines or groups does not sample or refresh all at once.
 */
export function schedulePhase(id: string, interval: number): number {
  let h = 2166136261;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 16777619);
  return (h >>> 0) % interval;
}
