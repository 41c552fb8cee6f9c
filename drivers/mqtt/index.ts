/**
 * The `mqtt` driver: machine values published on an MQTT broker (MQTT 5 or
 * 3.1.1, optionally over TLS), mapped from JSON or plain payloads to item
 * families, with presence from an availability topic or inactivity. See
 * docs/drivers/mqtt.md.
 */
import type { DriverFactory } from '../../core/driver-seam/driver.js';
import { MqttDriverClient } from './client.js';
import { mqttOptionsSchema, type MqttOptions } from './options.js';

export { MqttDriverClient } from './client.js';
export { mqttOptionsSchema } from './options.js';
export type { MqttOptions, MqttOptionsInput, MqttTopicInput } from './options.js';

export const mqttDriver: DriverFactory<MqttOptions> = {
  scheme: 'mqtt',
  description: 'MQTT 5 / 3.1.1 subscriber: machine values from JSON or plain payloads on broker topics, presence from an availability topic (last will) or inactivity',
  configSchema: mqttOptionsSchema,
  create(machine, deps) {
    return new MqttDriverClient(machine, deps);
  },
};
