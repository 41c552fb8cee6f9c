/** The cloud-broker plugin's part of the `cloud` section: the embedded broker, or the external one (docs/cloud-relay.md). */
import { z } from 'zod';
import { DEFAULT_CLOUD_MQTT_PORT } from '../../config/schema.js';

export const DEFAULT_REVOCATION_SWEEP_MS = 10_000;

export const CLOUD_BROKER_FIELDS = {
  /** The embedded broker (aedes, MQTT 3.1.1) the gateways dial; ignored when `brokerUrl` names an external one. */
  mqttHost: z.string().default('0.0.0.0'),
  mqttPort: z.number().int().min(0).max(65535).default(DEFAULT_CLOUD_MQTT_PORT),
  /** The embedded broker serves mqtts with this PEM certificate and key (files); plain mqtt without. */
  mqttTls: z.object({ certFile: z.string().min(1).max(1024), keyFile: z.string().min(1).max(1024) }).strict().optional(),
  /** An external broker (Mosquitto, EMQX, HiveMQ) instead of the embedded one. */
  brokerUrl: z.string().regex(/^mqtts?:\/\/[^\s/]+$/, 'an mqtt:// or mqtts:// URL').optional(),
  /**
   * With an mqtts `brokerUrl`: a PEM file of the CA to trust for the broker's
   * certificate (a private CA), and the cloud's client certificate and key
   * (both or neither) for a broker that asks for one. Used by the relay's
   * client and by the dynamic security admin client alike.
   */
  brokerTls: z.object({ caFile: z.string().min(1).max(1024).optional(), certFile: z.string().min(1).max(1024).optional(), keyFile: z.string().min(1).max(1024).optional() }).strict().optional(),
  /** The cloud's own user on an external broker; the password comes from CLOUD_BROKER_PASSWORD. */
  brokerUsername: z.string().min(1).max(128).optional(),
  /**
   * With `brokerUrl`, on a Mosquitto with its dynamic security plugin: the
   * cloud's own broker admin client, through which it adds, changes and
   * removes the gateways' broker clients as tokens are made, rotated and
   * revoked (core/roles/cloud/gateway-users.ts). The user name may come from
   * CLOUD_DYNSEC_USERNAME instead; the password comes from
   * CLOUD_DYNSEC_PASSWORD only.
   */
  dynamicSecurity: z.object({ username: z.string().min(1).max(128).optional() }).strict().optional(),
  /** How often gateways connected to the embedded broker are checked against revoked tokens. */
  revocationSweepMs: z.number().int().min(1000).max(3_600_000).default(DEFAULT_REVOCATION_SWEEP_MS),
  /** The longest wait between two attempts to connect to an external broker (exponential backoff with jitter from 1 s up to this). */
  brokerReconnectMaxSeconds: z.number().int().min(1).max(3600).default(60),
};
