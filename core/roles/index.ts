/**
 * Every role this build includes, in start order: the gateway first, so the
 * program service can reach it in-process. Adding a role is a folder under
 * core/roles/ with its definition, and one line here.
 */
import { cloudRole } from './cloud/definition.js';
import { gatewayRole } from './gateway/definition.js';
import { programsRole } from './programs/definition.js';

export const ROLES = [gatewayRole, programsRole, cloudRole] as const;
