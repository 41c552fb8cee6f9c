/**
 * A version as a person reads it before signing or sending it: the whole
 * text decoded as a preview decodes it (GET /versions/{id}/text), with the
 * encoding it was read in, line numbers, and on request every line ending
 * shown (CR, LF, or CR LF); and the exact bytes to download.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { message } from './model.js';

interface VersionText { text: string; encoding: string; sha256: string; size: number }

/** The lines of a text with each one's ending as written. */
export function linesOf(text: string): { body: string; end: string }[] {
  const out: { body: string; end: string }[] = [];
  const re = /\r\n|\r|\n/g;
  let at = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    out.push({ body: text.slice(at, m.index), end: m[0] });
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push({ body: text.slice(at), end: '' });
  return out;
}

const ENDINGS: Record<string, string> = { '\r\n': 'CR LF', '\n': 'LF', '\r': 'CR', '': 'no line ending' };

/** Lines drawn at once: a long program is drawn a page at a time, so a 4 MiB file does not stall the browser. */
export const LINES_AT_ONCE = 5000;

/** The download of a version's exact bytes (the session cookie goes with it; the service names the file). */
export function DownloadLink({ versionId, label }: { versionId: string; label: string }) {
  return <a class="button small" href={`/api/v1/versions/${versionId}/content`} download aria-label={`Download ${label}`}>Download</a>;
}

/** The whole text of a version, line by line; `label` names it (`O2000 version 2`). */
export function VersionTextView({ versionId, label, onClose }: { versionId: string; label: string; onClose: () => void }) {
  const [read, setRead] = useState<VersionText | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [endings, setEndings] = useState(false);
  const [drawn, setDrawn] = useState(LINES_AT_ONCE);
  useEffect(() => {
    void api.get<VersionText>(`/versions/${versionId}/text`).then(setRead, (err: unknown) => setError(message(err)));
  }, [versionId]);
  const lines = read ? linesOf(read.text) : [];
  return (
    <section class="card version-text" aria-label={`The text of ${label}`}>
      <h3>{label}</h3>
      {error && <p class="error" role="alert">{error}</p>}
      {read && (
        <>
          <p class="muted" data-encoding={read.encoding}>
            {lines.length} lines, {read.size} bytes, read as {read.encoding === 'utf-8' ? 'UTF-8' : 'Windows-1252 (every byte one character)'}; SHA-256 <code>{read.sha256.slice(0, 12)}</code>…
          </p>
          <p class="actions">
            <label class="check"><input type="checkbox" checked={endings} onChange={(e) => setEndings(e.currentTarget.checked)} /> Show line endings</label>
            <DownloadLink versionId={versionId} label={label} />
            <button type="button" onClick={onClose}>Close the text</button>
          </p>
          <table class="program-text" aria-label={`Lines of ${label}`}>
            <tbody>{lines.slice(0, drawn).map((l, i) => (
              <tr key={i}>
                <td class="ln">{i + 1}</td>
                <td>{l.body}{endings && <span class="eol" title={ENDINGS[l.end]}>{l.end === '' ? '⊘' : l.end.replace('\r', '␍').replace('\n', '␊')}</span>}</td>
              </tr>
            ))}</tbody>
          </table>
          {lines.length > drawn && <p class="actions"><button type="button" onClick={() => setDrawn(drawn + LINES_AT_ONCE)}>Show lines {drawn + 1}–{Math.min(lines.length, drawn + LINES_AT_ONCE)} of {lines.length}</button></p>}
        </>
      )}
    </section>
  );
}
