/** The security settings (administrators only): /api/security/settings, /api/security/settings/update. */
import { SECURITY } from '../../../core/roles/gateway/contract/security.js';
import { GatewayError } from '../../../core/interfaces/errors.js';
import { configManagedSettings, SETTING_PATHS } from '../config-settings.js';
import { parseWhiteListEntry } from '../ip-white-list.js';
import type { AuthDeps } from './deps.js';

/** Reading and changing security control and the IP white list; a change the config file overrides at the next start says so. */
export function defineSettingsInterfaces(deps: AuthDeps): void {
  const { ctx, users, policy } = deps;
  const implement = ctx.interfaces.implement.bind(ctx.interfaces);

  implement(SECURITY.settings, {
    handler: () => users.settings,
  });

  implement(SECURITY.updateSettings, {
    handler: async (input) => {
      const problems: string[] = [];
      (input.ipWhiteList ?? []).forEach((entry, i) => {
        try {
          parseWhiteListEntry(entry);
        } catch (err) {
          problems.push(`ipWhiteList[${i}]: ${(err as Error).message}`);
        }
      });
      if (problems.length) throw new GatewayError('INVALID_PARAMETER', problems.join('; '));
      const next = { ...users.settings, ...input };
      await users.saveSettings(next);
      policy.reload();
      // A setting the config file writes returns to the file's value at the next start: say so now.
      const managed = configManagedSettings({ writes: deps.configWrites }).filter((key) => key in input);
      return managed.length
        ? { ...next, configManaged: managed.map((key) => SETTING_PATHS[key]), warning: `the config file sets ${managed.map((key) => SETTING_PATHS[key]).join(', ')}; the next start applies the file's value again — change the file to keep this` }
        : next;
    },
  });
}
