/**
 * An event as one endpoint receives it (issue 36): its data cut to `{ analysis_id, link }` when
 * the analysis's TLP is above the endpoint's `max_tlp`, every known secret masked in what is left,
 * then written in the endpoint's format: `standard` (the Standard Webhooks body `{ type,
 * timestamp, data }`), `slack` (slack.ts) or `teams` (teams.ts). The result is the exact text
 * sent (and signed).
 */
import { maskKnownSecrets } from '../http/redact.js';
import { parseTlp, tlpRank, type Tlp } from '../marking/levels.js';
import type { WebhookFormat } from '../config/schema.js';
import type { OasEvent } from './events.js';
import { slackMessage } from './slack.js';
import { teamsMessage } from './teams.js';

/** Whether an endpoint of `maxTlp` may see the details of an analysis of `tlp` (`fallback` when the analysis has none). */
export function withinTlp(tlp: Tlp | undefined, maxTlp: string, fallback: string): boolean {
  return tlpRank(tlp ?? parseTlp(fallback)) <= tlpRank(parseTlp(maxTlp));
}

/** The event as an endpoint of `maxTlp` may see it: whole, or its data only the analysis's id and link. */
export function forTlp(event: OasEvent, maxTlp: string, fallbackTlp: string): OasEvent {
  if (!event.analysis || withinTlp(event.analysis.tlp, maxTlp, fallbackTlp)) return event;
  const id = typeof event.data['analysis_id'] === 'string' ? event.data['analysis_id'] : event.analysis.id;
  return { ...event, data: { analysis_id: id, link: event.data['link'] } };
}

/** Every string in `value` with each known secret masked (`***`). */
export function scrub<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return maskKnownSecrets(v, secrets);
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, inner]) => [k, walk(inner)]));
    return v;
  };
  return walk(value) as T;
}

/** The body an endpoint of `format` receives for `event` (already cut and scrubbed). */
export function renderBody(format: WebhookFormat, event: OasEvent): string {
  switch (format) {
    case 'slack':
      return JSON.stringify(slackMessage(event));
    case 'teams':
      return JSON.stringify(teamsMessage(event));
    default:
      return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
  }
}
