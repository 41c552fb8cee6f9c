/** The mcp plugin's part of the configuration: the `mcp` section (docs/configuration.md). */
import { z } from 'zod';
import { gatewayMcpAuthSchema } from './oauth.js';

export const MCP_FIELDS = {
  /** Browser origins allowed to call /mcp (e.g. "https://dashboard.plant.example"); requests without Origin are allowed. */
  allowedOrigins: z.array(z.string().min(1)).default([]),
  /** Host header values allowed for /mcp (e.g. "gateway-01:8080"); empty allows any (DNS-rebinding protection then rests on Origin). */
  allowedHosts: z.array(z.string().min(1)).default([]),
  /** OAuth 2.1 for remote MCP clients (docs/identity.md): the identity provider, this /mcp's URL, and the machine groups a token's claims grant. */
  mcpAuth: gatewayMcpAuthSchema.optional(),
};
