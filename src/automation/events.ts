/**
 * The events oas tells the team's automation about (issue 36), delivered by the webhooks of the
 * setting `webhooks` (and an analysis's `callback_url`): what happened, when, and its data. The
 * data never holds a secret; an event about an analysis carries the analysis's TLP, and an
 * endpoint whose `max_tlp` is below it gets only the analysis's id and link.
 */
import type { Tlp } from '../marking/levels.js';

/** The events a webhook may subscribe to (setting `webhooks[].events`). */
export const WEBHOOK_EVENTS = ['analysis.completed', 'observable.verdict', 'watchlist.changed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** One event, as the Standard Webhooks body carries it (`type`, `timestamp`, `data`). */
export interface OasEvent {
  /** A subscribed type, or `ping` (`oas webhooks test`). */
  type: WebhookEventType | 'ping';
  /** When it happened (ISO 8601). */
  timestamp: string;
  data: Record<string, unknown>;
  /**
   * The analysis it is about, and its TLP: above an endpoint's `max_tlp`, the endpoint gets only
   * `{ analysis_id, link }` (its `data` is cut to those). Absent for a ping.
   */
  analysis?: { id: string; tlp: Tlp | undefined };
}

/** Where events go: never throws, never delays the caller (deliveries run in the background). */
export interface EventSink {
  emit(event: OasEvent): void;
}

/** A sink that delivers nothing (no webhook configured, local commands). */
export const NO_EVENTS: EventSink = { emit: () => {} };
