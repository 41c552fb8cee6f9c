/** The events an endpoint can subscribe to, with what their `data` holds (docs/programs-webhooks.md). */
export const WEBHOOK_EVENTS = ['deployment.completed', 'deployment.failed', 'version.published', 'trial.started', 'trial.promoted', 'trial.pulled-back', 'drift.opened'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
