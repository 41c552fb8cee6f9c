/**
 * The config file and the stored security settings. As for the fleet (see
 * docs/configuration.md), the file is the truth for what it writes: a
 * setting the file writes itself replaces the stored one at every start, and
 * the change is logged and shown in the banner; a setting the file leaves to
 * its default keeps the value stored (set at first start or through
 * /api/security/settings/update). Nothing the file says is ignored silently.
 */
import type { Logger } from 'pino';
import { SETTING_PATHS } from './config.js';
import type { SecuritySettings, UserStore } from './user-store.js';

export { SETTING_PATHS } from './config.js';

/** What the config file says about the security settings: their values, whether it wrote each itself, and its name. */
export interface SettingsInFile {
  settings: SecuritySettings;
  writes(key: keyof SecuritySettings): boolean;
  file: string;
}

/** The settings the config file writes itself; the next start gives them the file's value. */
export function configManagedSettings(file: Pick<SettingsInFile, 'writes'>): (keyof SecuritySettings)[] {
  return (Object.keys(SETTING_PATHS) as (keyof SecuritySettings)[]).filter((key) => file.writes(key));
}

const show = (value: unknown) => JSON.stringify(value);

/** Applies the settings the file writes over the stored ones; returns one line per change for the banner. */
export async function applyConfigSettings(users: UserStore, file: SettingsInFile, logger: Logger): Promise<string[]> {
  const next: SecuritySettings = { ...users.settings };
  const changes: string[] = [];
  for (const key of configManagedSettings(file)) {
    const value = file.settings[key];
    if (show(value) === show(next[key])) continue;
    changes.push(`${SETTING_PATHS[key]} ${show(value)} (stored ${show(next[key])})`);
    Object.assign(next, { [key]: value });
  }
  if (!changes.length) return [];
  await users.saveSettings(next);
  logger.warn({ config: file.file, changes }, 'config file replaced stored security settings');
  return [`config ${file.file}: security settings applied: ${changes.join('; ')}`];
}
