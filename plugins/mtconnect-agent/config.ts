/**
 * The agent's part of the configuration: the `mtconnect` section (on by
 * default, every address, port 5000 as MTConnect agents use; MTCONNECT_PORT
 * overrides the port) and its own certificate pair, else the process's
 * TLS_CERT_FILE / TLS_KEY_FILE like every listener (core/http/tls.ts).
 */
import { z } from 'zod';
import type { ConfigPart } from '../../core/config/config-parts.js';
import { tlsFilesSchema } from '../../core/http/tls.js';

/** The port MTConnect agents listen on. */
export const DEFAULT_MTCONNECT_PORT = 5000;

export const MTCONNECT_FIELDS = {
  enabled: z.boolean().default(true),
  host: z.string().min(1).max(255).default('0.0.0.0'),
  port: z.number().int().min(0).max(65535).default(DEFAULT_MTCONNECT_PORT),
  /** The listener's own certificate and key; TLS_CERT_FILE/TLS_KEY_FILE otherwise. */
  tls: tlsFilesSchema.optional(),
};

export const MTCONNECT_CONFIG = {
  section: 'mtconnect',
  fields: MTCONNECT_FIELDS,
  env: { MTCONNECT_PORT: { field: 'port', type: 'port' } },
} satisfies ConfigPart<typeof MTCONNECT_FIELDS>;
