/**
 * Whether the machine behind the topics is there: its availability topic
 * (usually a retained `online` and a last will `offline`) and, when
 * configured, an inactivity timeout over every message from the machine. A
 * broker session that is up says nothing about the machine itself.
 */
import type { MqttAvailability } from './options.js';
import { parsePath, resolveTopic, topicMatches, valueAtPath } from './topics.js';

export type Availability = 'online' | 'offline' | 'unknown';

export class Presence {
  /** The availability topic filter, or undefined when presence comes from inactivity alone. */
  readonly filter: string | undefined;
  private availability: Availability = 'unknown';
  private availabilityTopic = '';
  /** Last message from the machine, or the start of the broker session if later. */
  private lastHeardAt = 0;
  private readonly pathKeys: Array<string | number>;

  constructor(
    private readonly settings: MqttAvailability | false,
    machineID: string,
    private readonly inactivityTimeoutMs: number,
  ) {
    this.filter = settings ? resolveTopic(settings.topic, machineID) : undefined;
    this.pathKeys = settings ? parsePath(settings.path) : [];
  }

  /** A new broker session: the broker re-sends the retained availability, so the old word no longer counts. */
  sessionStarted(now: number): void {
    this.availability = 'unknown';
    this.lastHeardAt = Math.max(this.lastHeardAt, now);
  }

  /** Any message from the machine; returns the availability it announces when it is one, else undefined. */
  heard(topic: string, payload: Buffer, now: number): Availability | undefined {
    this.lastHeardAt = now;
    if (!this.settings || this.filter === undefined || !topicMatches(this.filter, topic)) return undefined;
    const word = this.word(payload.toString('utf8'));
    if (word === this.settings.online.toLowerCase()) this.availability = 'online';
    else if (word === this.settings.offline.toLowerCase()) this.availability = 'offline';
    else return undefined;
    this.availabilityTopic = topic;
    return this.availability;
  }

  /** Why the machine counts as absent at `now`, or undefined while it is present (or not known to be absent). */
  absence(now: number): string | undefined {
    if (this.availability === 'offline' && this.settings) {
      return `machine reports '${this.settings.offline}' on ${this.availabilityTopic} (availability topic; a last will is sent when its publisher drops)`;
    }
    const silent = now - this.lastHeardAt;
    if (this.inactivityTimeoutMs > 0 && silent > this.inactivityTimeoutMs) {
      return `no message from the machine for ${(silent / 1000).toFixed(1)} s, longer than inactivityTimeoutMs ${this.inactivityTimeoutMs} ms`;
    }
    return undefined;
  }

  private word(text: string): string {
    if (this.pathKeys.length === 0) return text.trim().toLowerCase();
    try {
      const value = valueAtPath(JSON.parse(text) as unknown, this.pathKeys);
      return typeof value === 'string' ? value.trim().toLowerCase() : '';
    } catch {
      return '';
    }
  }
}
