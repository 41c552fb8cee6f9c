/**
 * A promote or pull-back, whichever instance receives it. The instance
 * running the trial's actor carries it out at once, as with one instance;
 * another stores it in the trial's row (`pending_decision`, one at a time)
 * for the holder, which carries it out once, in the transaction of the
 * transition it causes (its audit record and webhook with it), or drops it
 * with the reason when the trial is no longer where the decision applies.
 * A trial whose holder died keeps the decision until another instance
 * takes the trial over and carries it out. docs/programs-trials.md.
 */
import { randomUUID } from 'node:crypto';
import type { TrialEvent } from './trial-machine.js';
import type { TrialHolder } from './trial-deps.js';
import type { TrialRow } from './trial-store.js';

/** How long the receiving instance waits for the holder before answering 202 with the trial as it is. */
export const DECISION_WAIT_MS = 5000;

export type DecisionResult =
  /** Carried out: the trial as stored after it. */
  | { outcome: 'done'; trial: TrialRow }
  /** Stored for the holder, not carried out yet. */
  | { outcome: 'pending'; trial: TrialRow }
  /** Not carried out: the trial is not where the decision applies, or another decision waits for it. */
  | { outcome: 'refused'; trial: TrialRow; why: string };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function decideTrial(runner: TrialHolder, trial: TrialRow, event: TrialEvent, options: { waitMs?: number; pollMs?: number } = {}): Promise<DecisionResult> {
  const repo = runner.trials;
  let t = trial;
  const latest = async () => (await repo.get(t.id)) ?? t;
  const requestId = randomUUID();
  const decided = { ...event, decision: { ...event.decision, requestId } } as TrialEvent;
  if (runner.runs(t.id)) {
    if (!runner.can(t.id, decided)) return { outcome: 'refused', trial: await latest(), why: t.status === 'Deploying' ? `trial ${t.id} is still deploying; wait until it is Active` : `trial ${t.id} is ${t.status}` };
    await runner.send(t.id, decided);
    const now = await latest();
    if (now.decision?.requestId === requestId) return { outcome: 'done', trial: now };
    // Not stored: this instance lost the trial to another one a moment ago; the decision goes to the trial's row, for its holder.
    t = now;
  }
  // Another instance holds it (or nobody, until one takes it over): what this one can judge is the stored status.
  if (t.status !== 'Active') return { outcome: 'refused', trial: t, why: t.status === 'Deploying' ? `trial ${t.id} is still deploying; wait until it is Active` : `trial ${t.id} is ${t.status}` };
  if (!(await repo.requestDecision(t.id, { type: event.type, decision: { ...event.decision, requestId }, at: runner.now() }))) {
    const now = await latest();
    return { outcome: 'refused', trial: now, why: now.pendingDecision ? `another decision on trial ${t.id} waits for the instance that holds it` : `trial ${t.id} is ${now.status}` };
  }
  const deadline = Date.now() + (options.waitMs ?? runner.decisionWaitMs ?? DECISION_WAIT_MS);
  for (;;) {
    await sleep(options.pollMs ?? 100);
    const now = await latest();
    if (now.pendingDecision?.decision.requestId !== requestId) {
      if (now.decision?.requestId === requestId) return { outcome: 'done', trial: now };
      return { outcome: 'refused', trial: now, why: now.reason ?? `trial ${t.id} is ${now.status}` };
    }
    if (Date.now() >= deadline) return { outcome: 'pending', trial: now };
  }
}

/** The holder's side: carries out, one at a time, the decisions other instances stored for trials this instance holds (every second). */
export async function carryOutDecisions(runner: TrialHolder): Promise<void> {
  for (const { id, pending } of await runner.trials.pendingDecisions()) {
    const event = { type: pending.type, decision: pending.decision } as TrialEvent;
    if (runner.can(id, event)) {
      await runner.send(id, event);
      continue;
    }
    const status = runner.statusOf(id);
    // Not run here (stopping, or lost a moment ago): left for whoever holds the trial.
    if (status === undefined || !runner.runs(id)) continue;
    const kind = pending.type === 'PROMOTE' ? 'promotion' : 'pull-back';
    await runner.trials.refuseDecision(id, pending.decision.requestId, `the ${kind} by ${pending.decision.by} was not carried out: the trial was ${status} when its holder received it`, runner.now());
  }
}
