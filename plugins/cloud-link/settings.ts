/**
 * The cloud link's settings: the config's `cloudLink` section (the token
 * also from GATEWAY_CLOUD_TOKEN) overlaid with what an administrator set
 * through the API, kept in `<dataDir>/cloud-link.json` (mode 0600).
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { DEFAULT_TOPIC_PREFIX } from '../../core/cloud-wire/protocol.js';
import { FILE_MODE } from '../../core/store/data-directory.js';
import { BROKER_URL } from '../../core/roles/gateway/contract/security.js';
import type { CloudLinkConfig } from './config.js';

export const CLOUD_LINK_FILE = 'cloud-link.json';

export const TOKEN_HINT = 'a gateway token of the cloud (cgw_<id>_<secret>); the cloud\'s `npm run cloud-token -- create <name>` makes one';

/** What the link runs with. */
export interface LinkSettings {
  brokerUrl: string;
  accessToken: string;
  user: string;
  protocolVersion: 4 | 5;
  topicPrefix: string;
  source: 'config' | 'api';
}

const storedSchema = z
  .object({
    brokerUrl: z.string().regex(BROKER_URL).optional(),
    accessToken: z.string().min(1).max(256).optional(),
    user: z.string().min(1).max(128).optional(),
  })
  .strict();
export type StoredSettings = z.infer<typeof storedSchema>;

/** A URL without user:password, for showing. */
export function shownUrl(url: string): string {
  return url.replace(/^(mqtts?:\/\/)[^@/]*@/, '$1');
}

/** What the API stored in `file`; nothing when there is no file. */
export function readStoredSettings(file: string): StoredSettings {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`${file}: not JSON; set the cloud link again through /api/security/cloud-link/set, or delete the file`);
  }
  const parsed = storedSchema.safeParse(json);
  if (!parsed.success) throw new Error(`${file}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

/** Keeps `stored` in `file` (written aside, then renamed into place). */
export function writeStoredSettings(file: string, stored: StoredSettings): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(stored, null, 2)}\n`, { mode: FILE_MODE });
  renameSync(temp, file);
}

/** The config's settings overlaid with the stored ones; undefined when there is no broker or no token. */
export function linkSettings(config: CloudLinkConfig | undefined, env: Readonly<Record<string, string | undefined>>, stored: StoredSettings): LinkSettings | undefined {
  const brokerUrl = stored.brokerUrl ?? config?.brokerUrl;
  const accessToken = stored.accessToken ?? config?.accessToken ?? (config ? env.GATEWAY_CLOUD_TOKEN : undefined);
  if (!brokerUrl || !accessToken) return undefined;
  const source = stored.brokerUrl !== undefined || stored.accessToken !== undefined || stored.user !== undefined ? 'api' : 'config';
  return { brokerUrl, accessToken, user: stored.user ?? config?.runAs ?? 'admin', protocolVersion: config?.protocolVersion ?? 5, topicPrefix: config?.topicPrefix ?? DEFAULT_TOPIC_PREFIX, source };
}
