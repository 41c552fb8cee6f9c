/**
 * The auth plugin's own tables for sign-in through a provider: which
 * gateway account a person of the provider (issuer and subject) is, and the
 * sessions their sign-ins opened (what a back-channel logout ends). Both
 * follow the account: deleting the user deletes them.
 */
import type { Migration } from '../../../core/store/migrations.js';

export const SSO_MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    name: 'accounts and sessions of sign-in through an OpenID Connect provider',
    up: [
      `CREATE TABLE auth_sso_links (
          issuer     TEXT NOT NULL,
          subject    TEXT NOT NULL,
          account_id TEXT NOT NULL REFERENCES users (account_id) ON DELETE CASCADE,
          email      TEXT,
          name       TEXT,
          PRIMARY KEY (issuer, subject)
        )`,
      `CREATE TABLE auth_sso_sessions (
          id           TEXT PRIMARY KEY,
          account_id   TEXT NOT NULL REFERENCES users (account_id) ON DELETE CASCADE,
          issuer       TEXT NOT NULL,
          subject      TEXT NOT NULL,
          provider_sid TEXT,
          auth_time    INTEGER,
          created_at   INTEGER NOT NULL,
          expires_at   INTEGER NOT NULL
        )`,
      'CREATE INDEX auth_sso_sessions_expiry ON auth_sso_sessions (expires_at)',
    ],
  },
];
