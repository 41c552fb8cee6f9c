/**
 * The trial options of the deploy panel: the hours a trial is watched and
 * the rules that judge it (docs/programs-trials.md).
 */
export interface Trial { on: boolean; hours: string; maxCycleTimeIncreasePct: string; minCycles: string; failOnAlarms: boolean }

/** The deployment request's trial fields. */
export function trialBody(t: Trial): Record<string, unknown> {
  if (!t.on) return { isTrial: false, trialHours: null };
  return {
    isTrial: true, trialHours: Number(t.hours),
    trialRules: { maxCycleTimeIncreasePct: t.maxCycleTimeIncreasePct === '' ? null : Number(t.maxCycleTimeIncreasePct), minCycles: Number(t.minCycles), failOnAlarmLevels: t.failOnAlarms ? ['alarm', 'emergency'] : [] },
  };
}

export function TrialOptions({ trial, onChange }: { trial: Trial; onChange(t: Trial): void }) {
  return (
    <fieldset class="plain trial">
      <legend>Trial</legend>
      <label class="check"><input type="checkbox" checked={trial.on} onChange={(e) => onChange({ ...trial, on: e.currentTarget.checked })} /> Run it as a trial: watch the machines and pull it back if it does worse</label>
      {trial.on && (
        <div class="inline-form">
          <label>Hours watched <input type="number" min={1} max={720} value={trial.hours} onInput={(e) => onChange({ ...trial, hours: e.currentTarget.value })} /></label>
          <label>Fails when cycle time grows by more than (%) <input type="number" min={0} max={1000} value={trial.maxCycleTimeIncreasePct} onInput={(e) => onChange({ ...trial, maxCycleTimeIncreasePct: e.currentTarget.value })} /></label>
          <label>Cycles needed to judge <input type="number" min={1} max={10000} value={trial.minCycles} onInput={(e) => onChange({ ...trial, minCycles: e.currentTarget.value })} /></label>
          <label class="check"><input type="checkbox" checked={trial.failOnAlarms} onChange={(e) => onChange({ ...trial, failOnAlarms: e.currentTarget.checked })} /> an alarm fails it</label>
        </div>
      )}
    </fieldset>
  );
}
