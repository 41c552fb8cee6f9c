/**
 * The config file and the stored security settings. As for the fleet (see
 * docs/configuration.md), the file is the truth for what it writes: a
 * setting the file writes itself replaces the stored one at every start, and
 * the change is logged and shown in the banner; a setting the file leaves to
 * its default keeps the value stored (set at first start or through
 * /api/security/settings/update). Nothing the file says is ignored silently.
 */
import type { Logger } from 'pino';
import type { GatewayConfig } from '../../config/schema.js';
import { configSource, configWrites } from '../../core/config.js';
import type { SecuritySettings, UserStore } from './user-store.js';

/** Each stored setting with the config path that writes it. */
export const SETTING_PATHS: Readonly<Record<keyof SecuritySettings, string>> = {
  securityControl: 'security.securityControl',
  enableIpWhiteList: 'communication.enableIpWhiteList',
  ipWhiteList: 'communication.ipWhiteList',
};

/** The settings the config file writes itself; the next start gives them the file's value. */
export function configManagedSettings(config: GatewayConfig): (keyof SecuritySettings)[] {
  return (Object.keys(SETTING_PATHS) as (keyof SecuritySettings)[]).filter((key) => configWrites(config, SETTING_PATHS[key]));
}

function fileValue(config: GatewayConfig, key: keyof SecuritySettings): SecuritySettings[keyof SecuritySettings] {
  if (key === 'securityControl') return config.security.securityControl;
  return config.communication[key];
}

const show = (value: unknown) => JSON.stringify(value);

/** Applies the settings the file writes over the stored ones; returns one line per change for the banner. */
export async function applyConfigSettings(users: UserStore, config: GatewayConfig, logger: Logger): Promise<string[]> {
  const next: SecuritySettings = { ...users.settings };
  const changes: string[] = [];
  for (const key of configManagedSettings(config)) {
    const value = fileValue(config, key);
    if (show(value) === show(next[key])) continue;
    changes.push(`${SETTING_PATHS[key]} ${show(value)} (stored ${show(next[key])})`);
    Object.assign(next, { [key]: value });
  }
  if (!changes.length) return [];
  await users.saveSettings(next);
  const source = configSource(config);
  logger.warn({ config: source, changes }, 'config file replaced stored security settings');
  return [`config ${source}: security settings applied: ${changes.join('; ')}`];
}
