/** The authentication and security-administration interfaces (HTTP only; no MCP tool exposes them), in the order the API lists them. */
import type { AuthDeps } from './deps.js';
import { defineKeyInterfaces } from './keys.js';
import { defineLoginInterfaces } from './login.js';
import { defineSettingsInterfaces } from './settings.js';
import { defineUserInterfaces } from './users.js';

export type { AuthDeps } from './deps.js';

export function defineAuthInterfaces(deps: AuthDeps): void {
  defineLoginInterfaces(deps);
  defineUserInterfaces(deps);
  defineKeyInterfaces(deps);
  defineSettingsInterfaces(deps);
}
