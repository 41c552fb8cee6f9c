/**
 * The approval queue: each version with what it changes on the machine, its
 * whole text to view and its bytes to download (a first version too), and
 * approve or reject with a comment; a separation-of-duties refusal is said in
 * plain words.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, ProblemError, type Me } from './api.js';
import { MachineSummary, type Diff } from './diff.js';
import { may, message, type Approval, type Page, type Program, type Version } from './model.js';
import { DownloadLink, VersionTextView } from './version-text.js';

/** The version in force when `a` was submitted: the newest published version before it. */
async function inForce(a: Approval): Promise<Version | undefined> {
  const versions = (await api.get<Page<Version>>(`/programs/${a.programId}/versions?limit=1000`)).items;
  return versions.filter((v) => v.state === 'published' && v.number < a.versionNumber).sort((x, y) => y.number - x.number)[0];
}

/** What the version changes on the machine against the version in force, and a link to the whole diff. */
function AgainstInForce({ approval, generation }: { approval: Approval; generation: number }) {
  const [state, setState] = useState<{ base?: Version; diff?: Diff; error?: string } | null>(null);
  useEffect(() => {
    void (async () => {
      const base = await inForce(approval);
      if (!base) return setState({});
      setState({ base, diff: await api.get<Diff>(`/programs/${approval.programId}/diff?from=${base.id}&to=${approval.versionId}`) });
    })().catch((err: unknown) => setState({ error: message(err) }));
  }, [approval.id, generation]);
  if (!state) return <p class="muted">Reading the changes…</p>;
  if (state.error) return <p class="error">{state.error}</p>;
  if (!state.base || !state.diff) return <p>The first version of this program to be published: nothing in force to compare it with.</p>;
  return (
    <section aria-label={`Changes against version ${state.base.number}`}>
      <h3>Against version {state.base.number}, in force now</h3>
      {state.diff.identical ? <p>The same program as version {state.base.number} (after canonicalisation).</p> : <MachineSummary summary={state.diff.summary} />}
      <p><a href={`#/programs/${approval.programId}/versions/${approval.versionNumber}?diff=${state.base.number}`}>The whole diff, side by side</a></p>
    </section>
  );
}

export function Approvals({ me }: { me: Me }) {
  const [items, setItems] = useState<Approval[]>([]);
  const [generation, setGeneration] = useState(0);
  const [programs, setPrograms] = useState<Map<string, Program>>(new Map());
  const [comment, setComment] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [viewing, setViewing] = useState<string | null>(null);
  const load = async () => {
    const [a, p] = await Promise.all([api.get<Page<Approval>>('/approvals?state=pending&limit=200'), api.get<Page<Program>>('/programs?limit=500')]);
    setItems(a.items);
    // A decision may change the version in force of the cards still shown.
    setGeneration((g) => g + 1);
    setPrograms(new Map(p.items.map((x) => [x.id, x])));
  };
  useEffect(() => void load().catch((err: unknown) => setError(message(err))), []);
  const decide = async (a: Approval, decision: 'approve' | 'reject') => {
    setError(null);
    setNotice(null);
    try {
      const answer = await api.post<{ approval: Approval; version: Version }>(`/approvals/${a.id}/decide`, { decision, comment: comment[a.id] ?? '' });
      setNotice(`${programs.get(a.programId)?.name ?? a.programId} version ${a.versionNumber}: ${decision === 'approve' ? 'approved' : 'rejected'}; the version is now ${answer.version.state}.`);
      await load();
    } catch (err) {
      // A separation-of-duties refusal comes back as a problem document whose detail says who may not decide and why.
      setError(err instanceof ProblemError && (err.problem.status === 403 || err.problem.type?.includes('separation-of-duties')) ? `Not allowed: ${err.problem.detail ?? err.message}` : message(err));
    }
  };
  return (
    <main id="main">
      <h1>Approvals</h1>
      {error && <p class="error" role="alert">{error}</p>}
      {notice && <p class="notice" role="status">{notice}</p>}
      {items.length === 0 && <p>Nothing waits for approval.</p>}
      <ul class="plain-list">
        {items.map((a) => {
          const label = `${programs.get(a.programId)?.name ?? a.programId} version ${a.versionNumber}`;
          return (
          <li key={a.id} class="card" data-approval={a.id}>
            <h2>{label}</h2>
            <p class="muted">Submitted by {a.createdBy}; {a.approvals} of {a.required} approvals. Who may not approve it: {a.excluded.join(', ') || 'nobody'}.</p>
            <AgainstInForce approval={a} generation={generation} />
            <p class="actions">
              <button type="button" aria-expanded={viewing === a.id} aria-label={`View ${label}`} onClick={() => setViewing(viewing === a.id ? null : a.id)}>View</button>
              <DownloadLink versionId={a.versionId} label={label} />
            </p>
            {viewing === a.id && <VersionTextView versionId={a.versionId} label={label} onClose={() => setViewing(null)} />}
            {may(me, 'approvals.decide') && (
              <>
            <label for={`comment-${a.id}`}>Comment</label>
            <input id={`comment-${a.id}`} value={comment[a.id] ?? ''} onInput={(e) => setComment({ ...comment, [a.id]: e.currentTarget.value })} />
            <p class="actions">
              <button type="button" class="primary" onClick={() => void decide(a, 'approve')}>Approve</button>
              <button type="button" onClick={() => void decide(a, 'reject')}>Reject</button>
            </p>
              </>
            )}
          </li>
          );
        })}
      </ul>
    </main>
  );
}
