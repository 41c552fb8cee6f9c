/**
 * The MQTT driver's scenarios against a real Mosquitto (Debian package
 * `mosquitto`), MQTT 3.1.1 and 5, and the driver conformance suite with
 * Mosquitto as the peer that dies and comes back. Without Mosquitto these
 * tests fail, they do not skip.
 */
import { describe, expect, it } from 'vitest';
import { conformanceCases } from '../drivers/conformance/cases.js';
import { mqttRow } from '../drivers/conformance/peers.js';
import { mqttScenarios } from '../drivers/mqtt/scenarios.js';
import { mosquittoBrokers, mosquittoPath } from './mosquitto.js';

describe('mosquitto peer', () => {
  it('is installed', () => {
    expect(mosquittoPath()).toMatch(/mosquitto$/);
  });
});

mqttScenarios(mosquittoBrokers);

conformanceCases(mqttRow(mosquittoBrokers));
