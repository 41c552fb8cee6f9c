/**
 * "Sign in with {provider}" beside a console's local login form, when the
 * role signs people in through an OpenID Connect provider
 * (`/auth/oidc/status`; docs/identity.md). When the provider cannot be
 * reached the button gives way to a sentence saying so, and the local form
 * works as before.
 */
import { useEffect, useState } from 'preact/hooks';

type Status = { displayName: string; reachable: boolean } | null;

/** The sign-in through the provider, going back to `returnTo` (this console's page) afterwards. */
export function SsoSignIn({ returnTo }: { returnTo: string }) {
  const [status, setStatus] = useState<Status>(null);
  useEffect(() => {
    let live = true;
    fetch('/auth/oidc/status', { headers: { accept: 'application/json' } })
      // Without a provider the role answers {"configured": false}: no button.
      .then(async (r) => (r.ok ? ((await r.json()) as NonNullable<Status> | { configured: false }) : null))
      .then((s) => (s && 'displayName' in s ? s : null))
      .then((s) => live && setStatus(s), () => live && setStatus(null));
    return () => {
      live = false;
    };
  }, []);
  if (!status) return null;
  if (!status.reachable) return <p class="note" role="status">{status.displayName} cannot be reached now: sign in with a local account.</p>;
  return (
    <p class="sso">
      <a class="button" href={`/auth/oidc/login?returnTo=${encodeURIComponent(returnTo)}`}>Sign in with {status.displayName}</a>
    </p>
  );
}
