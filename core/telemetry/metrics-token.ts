/**
 * The token a Prometheus scrape of `/metrics` presents (`Authorization:
 * Bearer <token>`; in Prometheus' scrape config `authorization: {credentials:
 * …}`). It is the configuration's `metricsToken` when set (its environment
 * override `METRICS_TOKEN`; at least 16 characters), else a
 * random `mtk_…` token made at the first start of a role on the data
 * directory and shown once among the start-up secrets; only its SHA-256 is
 * kept, in `metrics-token.sha256` (mode 0600). Every role on the directory
 * takes the same token. Delete the file and restart to get a new one.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hashSecret, secretMatches } from '../auth/bearer-tokens.js';
import { FILE_MODE } from '../store/data-directory.js';

export const METRICS_TOKEN_FILE = 'metrics-token.sha256';
export const METRICS_TOKEN_VARIABLE = 'METRICS_TOKEN';
export const METRICS_TOKEN_MIN_LENGTH = 16;
const MAX_TOKEN_LENGTH = 512;

export interface MetricsToken {
  /** Whether `presented` (the Authorization header) carries the token. */
  accepts(authorization: string | undefined): boolean;
  /** Where the token comes from: the configuration (or its variable), or the data directory's file. */
  source: 'environment' | 'file';
  /** The line to show once at this start (a token made now); undefined otherwise. */
  announcement: string | undefined;
}

/** The token of `dataDir` (created on first use) or `given` (`metricsToken`, METRICS_TOKEN); throws naming the setting when it is too short. */
export function loadMetricsToken(dataDir: string, given: string | undefined): MetricsToken {
  const fromEnv = given;
  let hash: string;
  let announcement: string | undefined;
  let source: MetricsToken['source'] = 'file';
  if (fromEnv !== undefined && fromEnv !== '') {
    if (fromEnv.length < METRICS_TOKEN_MIN_LENGTH || fromEnv.length > MAX_TOKEN_LENGTH || /[^\x21-\x7e]/.test(fromEnv)) {
      throw new Error(`metricsToken (${METRICS_TOKEN_VARIABLE}): expected ${METRICS_TOKEN_MIN_LENGTH} to ${MAX_TOKEN_LENGTH} printable characters without spaces (e.g. openssl rand -base64 32)`);
    }
    hash = hashSecret(fromEnv);
    source = 'environment';
  } else {
    const file = join(dataDir, METRICS_TOKEN_FILE);
    if (!existsSync(file)) {
      const token = `mtk_${randomBytes(32).toString('base64url')}`;
      try {
        // 'wx': of two roles starting at once, one makes the token and shows it.
        writeFileSync(file, `${hashSecret(token)}\n`, { mode: FILE_MODE, flag: 'wx' });
        announcement = `metrics token:  ${token}  (shown once; Prometheus sends it as Authorization: Bearer; only its hash is kept, in ${METRICS_TOKEN_FILE})`;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    hash = readFileSync(file, 'utf8').trim();
  }
  return {
    source,
    announcement,
    accepts(authorization) {
      if (typeof authorization !== 'string' || authorization.length > MAX_TOKEN_LENGTH + 7) return false;
      const match = /^Bearer +(\S+)$/i.exec(authorization.trim());
      return match !== null && secretMatches(match[1] as string, hash);
    },
  };
}
