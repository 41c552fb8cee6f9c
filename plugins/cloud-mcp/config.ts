/** The cloud-mcp plugin's part of the `cloud` section: how long a relayed call may take, the Host allow-list of /mcp, and its OAuth settings. */
import { z } from 'zod';
import { DEFAULT_CALL_DEADLINE_MS } from '../../core/cloud-wire/protocol.js';
import { mcpAuthSchema } from './mcp-auth.js';

export const CLOUD_MCP_FIELDS = {
  /** How long a relayed tool call may take. */
  callDeadlineMs: z.number().int().min(1000).max(300_000).default(DEFAULT_CALL_DEADLINE_MS),
  /** As `mcp.allowedHosts`, for the cloud's /mcp. */
  allowedHosts: z.array(z.string().min(1)).default([]),
  /** OAuth 2.1 for remote MCP clients (docs/identity.md): the issuer, this /mcp's URL, and what a token's claims let it see. */
  mcpAuth: mcpAuthSchema.optional(),
};
