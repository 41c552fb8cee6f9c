/** The in-process MQTT broker is core's (the cloud role embeds it too); the simulator and the tests use it from here. */
export { InProcessBroker, startMqttBroker, type InProcessBrokerOptions } from '../../core/mqtt/broker.js';
