/**
 * The cloud-link plugin's part of the configuration: the optional
 * `cloudLink` section, the gateway's outbound link to a cloud relay
 * (docs/cloud-relay.md). Absent: no link, until one is set through the API.
 */
import { z } from 'zod';
import { DEFAULT_TOPIC_PREFIX } from '../../core/cloud-wire/protocol.js';
import type { PartSettings } from '../../core/config/config-parts.js';
import { BROKER_URL } from '../../core/roles/gateway/contract/security.js';


export const CLOUD_LINK_FIELDS = {
  /** The broker, mqtt://host:1883 or mqtts://host:8883. */
  brokerUrl: z.string().regex(BROKER_URL, 'an mqtt:// or mqtts:// URL such as mqtt://cloud.example:1883'),
  /** The gateway token the cloud made for this gateway (cgw_…); or set GATEWAY_CLOUD_TOKEN instead of writing it here. */
  accessToken: z.string().min(1).max(256).optional(),
  /**
   * The gateway user whose rights (authorised API list) cloud calls run
   * with; the built-in administrator by default. Not the MQTT user name:
   * that is the token's id. Formerly `user`, still read with a deprecation
   * line (CLOUD_LINK_ALIASES).
   */
  runAs: z.string().min(1).max(128).default('admin'),
  /** MQTT protocol: 5 (request/response properties), falling back to 3.1.1 when the broker refuses 5 (the embedded aedes). */
  protocolVersion: z.union([z.literal(5), z.literal(4)]).default(5),
  topicPrefix: z.string().min(1).max(64).regex(/^[\w./-]+$/, 'letters, digits, _ . / -').default(DEFAULT_TOPIC_PREFIX),
  /** A PEM file of the CA (or the certificate itself) to trust for an mqtts broker with a private certificate. */
  caFile: z.string().min(1).max(1024).optional(),
  /**
   * The gateway's client certificate and its key (PEM files, both or
   * neither), for an mqtts broker that asks for one (Mosquitto's
   * `require_certificate`). Beside the token, not instead of it: the broker
   * still takes the token as the password.
   */
  certFile: z.string().min(1).max(1024).optional(),
  keyFile: z.string().min(1).max(1024).optional(),
  /** MQTT keepalive: a broker that hears nothing for 1.5 times this publishes the gateway's will (offline). */
  keepaliveSeconds: z.number().int().min(5).max(600).default(15),
  /** The longest wait between two attempts to connect (exponential backoff with jitter from 1 s up to this). */
  reconnectMaxSeconds: z.number().int().min(1).max(3600).default(60),
};

/** Old spellings of the section's fields, still read (core/config/config-parts.ts `aliases`). */
export const CLOUD_LINK_ALIASES = { 'cloudLink.user': 'cloudLink.runAs' } as const;

/** The `cloudLink` section as parsed; undefined when the config has none. */
export type CloudLinkConfig = PartSettings<typeof CLOUD_LINK_FIELDS>;
