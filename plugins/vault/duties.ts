/**
 * Separation of duties: who may decide on a version's approval. A caller
 * acts under two names, its own (the user or token) and the operator it
 * declares with X-On-Behalf-Of, and each counts as a person: the people who
 * uploaded or submitted a version may not decide on it, and one person
 * decides at most once. Names compare without regard to case. The one place
 * these rules live; docs/programs-vault.md.
 */
import type { RestPrincipal } from '../../core/rest/operation.js';
import { ProblemError } from '../../core/rest/problem.js';
import type { Approval, Library, Version } from './records.js';

/** The names someone acted under: its own, and the operator it declared when it did. */
export function namesOf(name: string, operator: string | null): string[] {
  return operator ? [name, operator] : [name];
}

/** Whether two lists of names share a person. */
export function samePerson(a: readonly string[], b: readonly string[]): boolean {
  const keys = new Set(a.map((n) => n.toLowerCase()));
  return b.some((n) => keys.has(n.toLowerCase()));
}

type Parties = Pick<Version, 'author' | 'authorOperator' | 'submittedBy' | 'submittedOperator'>;
const uploaders = (v: Parties): string[] => namesOf(v.author, v.authorOperator);
const submitters = (v: Parties): string[] => (v.submittedBy ? namesOf(v.submittedBy, v.submittedOperator) : []);
const deciders = (a: Pick<Approval, 'decisions'>): string[] => a.decisions.flatMap((d) => namesOf(d.approver, d.onBehalfOf));

/** Who may not approve a version: its uploaders and submitters, each person once, in the order they acted. */
export function excludedOf(v: Parties): string[] {
  const out: string[] = [];
  for (const name of [...uploaders(v), ...submitters(v)]) if (!samePerson([name], out)) out.push(name);
  return out;
}

/** With a named approver list: how many of them may still approve; null when the library names none (anyone with approvals.decide in scope). */
export function eligibleLeft(library: Library, version: Parties, approval: Pick<Approval, 'decisions'>): number | null {
  if (library.approvers.length === 0) return null;
  const excluded = [...uploaders(version), ...submitters(version), ...deciders(approval)];
  return library.approvers.filter((a) => !samePerson([a], excluded)).length;
}

/**
 * Throws when `p` may not decide on `approval`: 403 `separation-of-duties`
 * when it, or the operator it declares, uploaded or submitted the version;
 * 403 when the library names its approvers and `p` is not one; 409 when a
 * person it names has decided already.
 */
export function checkDecider(p: RestPrincipal, version: Parties, library: Library, approval: Pick<Approval, 'decisions' | 'required'>): void {
  const mine = namesOf(p.name, p.onBehalfOf);
  const left = eligibleLeft(library, version, approval);
  const as = (names: readonly string[]): string => {
    const who = mine.find((n) => samePerson([n], names)) as string;
    return who === p.name ? who : `${who} (declared by ${p.name} with X-On-Behalf-Of)`;
  };
  const refuse = (rule: string, names: readonly string[]) =>
    new ProblemError('separation-of-duties', `${as(names)} ${rule} and may not decide on it${left === 0 ? '; nobody eligible is left to approve it' : ''}`, {
      extensions: { rule, eligibleApproversLeft: left },
    });
  if (samePerson(mine, uploaders(version))) throw refuse('uploaded this version', uploaders(version));
  if (samePerson(mine, submitters(version))) throw refuse('submitted this version', submitters(version));
  if (library.approvers.length > 0 && !samePerson([p.name], library.approvers)) {
    throw new ProblemError('forbidden', `${p.name} is not one of the approvers of library ${library.name} (${library.approvers.join(', ')})`, { extensions: { eligibleApproversLeft: left } });
  }
  if (samePerson(mine, deciders(approval))) {
    throw new ProblemError('conflict', `${as(deciders(approval))} has already decided on this approval; a policy needing ${approval.required} approvals needs ${approval.required} different approvers`, {
      extensions: { eligibleApproversLeft: left },
    });
  }
}
