/**
 * The system page's Northbound section: each target the gateway publishes
 * the history to, with its state, cursor, backlog (rows and age), rows lost
 * to retention and the last error, from gateway-info's `northbound`
 * (docs/northbound.md, "Watching a target"), every 5 seconds.
 */
import { useState } from 'preact/hooks';
import type { NorthboundStatus, NorthboundTargetStatus } from '../../../../core/roles/gateway/northbound-status.js';
import { api, ApiError } from '../shared/api.js';
import { usePoll } from '../shared/poll.js';

const STATE_LABEL: Record<NorthboundTargetStatus['state'], string> = {
  connected: 'Connected', connecting: 'Connecting', retrying: 'Retrying', disabled: 'Disabled', stopped: 'Stopped',
};
const STATE_CLASS: Record<NorthboundTargetStatus['state'], string> = {
  connected: 'state-running', connecting: 'state-idle', retrying: 'state-alarm', disabled: 'state-inactive', stopped: 'state-offline',
};

const age = (sec: number) => (sec >= 3600 ? `${(sec / 3600).toFixed(1)} h` : sec >= 60 ? `${Math.round(sec / 60)} min` : `${Math.round(sec)} s`);
const when = (ms: number | undefined) => (ms === undefined ? '' : new Date(ms).toLocaleString());

function Target({ t }: { t: NorthboundTargetStatus }) {
  return (
    <tr data-target={t.name}>
      <th scope="row">
        {t.name}
        {t.description && <div class="raw-reason">{t.description}</div>}
      </th>
      <td>{t.format === 'sparkplug' ? `Sparkplug B (${t.topicRoot}/${t.edgeNodeId ?? ''})` : `UNS JSON (${t.topicRoot})`}<div class="raw-reason">{t.brokerUrl}</div></td>
      <td>
        <span class={`badge ${STATE_CLASS[t.state]}`} data-state={t.state}>{STATE_LABEL[t.state]}</span>
        {t.state === 'retrying' && <div class="raw-reason">{t.failedAttempts} failed attempt{t.failedAttempts === 1 ? '' : 's'}{t.nextAttemptAt ? `, next at ${new Date(t.nextAttemptAt).toLocaleTimeString()}` : ''}</div>}
      </td>
      <td class="cursor">{t.cursor} <div class="raw-reason">of {t.committedThrough}</div></td>
      <td class="backlog">{t.backlogRows === 0 ? 'none' : `${t.backlogRows} rows, ${age(t.backlogSeconds)}`}</td>
      <td class="lost">{t.lostRows > 0 ? <span class="warn">{t.lostRows} lost to retention</span> : '0'}{t.oversizeRows > 0 && <div class="warn">{t.oversizeRows} too large for the broker</div>}</td>
      <td class="last-error">{t.lastError ? <><span class="error">{t.lastError}</span><div class="raw-reason">{when(t.lastErrorAt)}</div></> : '—'}</td>
    </tr>
  );
}

export function NorthboundTargets() {
  const [targets, setTargets] = useState<NorthboundTargetStatus[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [refused, setRefused] = useState(false);
  usePoll(async () => {
    try {
      const info = await api.get<{ northbound: NorthboundStatus }>('/api/system/gateway-info');
      setTargets(info.northbound.targets);
      setError(null);
      setRefused(false);
    } catch (err) {
      // A user whose API list lacks gateway-info is told so plainly: not an error of the gateway.
      if (err instanceof ApiError && err.status === 403) setRefused(true);
      else setError(err instanceof ApiError ? err.message : 'The gateway could not be reached; retrying.');
    }
  }, 5000);
  return (
    <section class="card northbound" aria-labelledby="northbound-title">
      <h2 id="northbound-title">Northbound</h2>
      {refused && <p class="muted">Your account may not read the gateway's information (<code>/api/system/gateway-info</code>); an administrator can add it to your API list.</p>}
      {error && <p class="error" role="alert">{error}</p>}
      {targets && targets.length === 0 && <p>No target: the history is not published to a plant broker. Add a <code>northbound</code> section to the configuration (docs/northbound.md).</p>}
      {targets && targets.length > 0 && (
        <table class="targets">
          <caption class="raw-reason">What each target has published: the cursor is the last history row its broker acknowledged.</caption>
          <thead>
            <tr><th scope="col">Target</th><th scope="col">Format and broker</th><th scope="col">State</th><th scope="col">Cursor</th><th scope="col">Backlog</th><th scope="col">Lost</th><th scope="col">Last error</th></tr>
          </thead>
          <tbody>{targets.map((t) => <Target key={t.name} t={t} />)}</tbody>
        </table>
      )}
    </section>
  );
}
