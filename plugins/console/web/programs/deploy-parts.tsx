/**
 * Parts of the deploy panel: one assignment (chosen or not, its directory
 * changed, removed, previewed) and the trial options (hours and the rules
 * that judge it, docs/programs-trials.md).
 */
import { useState } from 'preact/hooks';
import { api } from './api.js';
import { message, type Assignment } from './model.js';

export interface AssignmentRowProps {
  assignment: Assignment;
  label: string;
  title: string;
  chosen: boolean;
  locked: boolean;
  onChoose(on: boolean): void;
  onPreview(): void;
  onChanged(a: Assignment): void;
  onRemoved(): void;
  onError(text: string | null): void;
}

export function AssignmentRow(props: AssignmentRowProps) {
  const { assignment: a, label } = props;
  const [editing, setEditing] = useState(false);
  const [dir, setDir] = useState(a.dir);
  const run = async (call: () => Promise<void>) => {
    props.onError(null);
    try {
      await call();
    } catch (err) {
      props.onError(message(err));
    }
  };
  const save = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      props.onChanged(await api.patch<Assignment>(`/machine-assignments/${a.id}`, { dir }));
      setEditing(false);
    });
  };
  return (
    <div class="assignment" data-assignment={label}>
      <label class="check" title={props.title}>
        <input type="checkbox" checked={props.chosen} disabled={props.locked} onChange={(e) => props.onChoose(e.currentTarget.checked)} /> {label} {a.dir ? <code>{a.dir}</code> : <span class="muted">(the machine's directory)</span>}
      </label>
      <button type="button" class="small" onClick={props.onPreview}>Preview</button>
      {!props.locked && <button type="button" class="small" aria-expanded={editing} onClick={() => setEditing(!editing)}>Change</button>}
      {!props.locked && <button type="button" class="small" onClick={() => void run(async () => { await api.delete(`/machine-assignments/${a.id}`); props.onRemoved(); })}>Remove</button>}
      {editing && (
        <form class="inline-form" aria-label={`Change the assignment to ${label}`} onSubmit={save}>
          <label>Directory <input value={dir} placeholder="the machine's own, if it has one" onInput={(e) => setDir(e.currentTarget.value)} /></label>
          <button type="submit">Save the assignment</button>
        </form>
      )}
    </div>
  );
}

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
