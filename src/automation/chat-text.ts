/**
 * Words shared by the chat formats (Slack and Teams, issue 36): titles and facts of an event in
 * oas's own words, and the text that came from outside (observables, reasons, places, names) kept
 * as data. Observables are defanged (`hxxps://evil[.]example`), so a chat never shows a live link
 * to what is being analysed; upstream text is cut to a chat's limits and placed by each format
 * where it is not interpreted (Slack plain_text, Teams TextRun).
 */
import type { OasEvent } from './events.js';

/** `https://evil.example/x` -> `hxxps://evil[.]example/x`; `a@b.example` -> `a@b[.]example`. */
export function defang(value: string): string {
  return value.replace(/^http/i, (scheme) => (scheme[0] === 'H' ? 'HXXP' : 'hxxp')).replace(/\./g, '[.]');
}

/** At most `max` characters, an ellipsis marking a cut. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export const str = (value: unknown): string => (typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value));

/** Whether the event's data was cut to `{ analysis_id, link }` (the endpoint's max_tlp). */
export function isWithheld(event: OasEvent): boolean {
  const keys = Object.keys(event.data);
  return event.analysis !== undefined && keys.length === 2 && 'analysis_id' in event.data && 'link' in event.data;
}

/** One fact: a label and a value, both oas's own words. */
export interface Fact {
  title: string;
  value: string;
}

/**
 * What a chat message says of an event: a title and facts (oas's own words), lines of text from
 * outside (never interpreted), and the link to the results.
 */
export interface ChatMessage {
  title: string;
  facts: Fact[];
  /** Upstream text: shown as plain text, each entry a paragraph. */
  data: string[];
  /** A note of oas's own (the marking, the analysis id). */
  note: string;
  link: string | undefined;
}

const VERDICT_TITLE: Record<string, string> = { malicious: 'Malicious', suspicious: 'Suspicious', clean: 'Clean', unknown: 'Unknown' };

/** The message of any event, in oas's words, its outside text set apart. */
export function chatMessage(event: OasEvent): ChatMessage {
  const d = event.data;
  const link = typeof d['link'] === 'string' ? d['link'] : undefined;
  const analysis = event.analysis ? `Analysis ${event.analysis.id}` : '';
  const marking = event.analysis?.tlp ? `TLP:${event.analysis.tlp}` : '';
  const note = [analysis, marking].filter(Boolean).join(' · ');
  if (isWithheld(event)) {
    return {
      title: `oas: ${event.type}`,
      facts: [],
      data: [],
      note: `${note}${note ? ' · ' : ''}details withheld: the analysis's TLP is above this webhook's max_tlp`,
      link,
    };
  }
  switch (event.type) {
    case 'analysis.completed': {
      const counts = (d['verdicts'] ?? {}) as Record<string, unknown>;
      const facts: Fact[] = [
        { title: 'Worst verdict', value: str(d['worst_verdict']) || 'unknown' },
        { title: 'Observables', value: str(d['observables']) },
        { title: 'Verdicts', value: ['malicious', 'suspicious', 'clean', 'unknown'].map((v) => `${Number(counts[v] ?? 0)} ${v}`).join(' · ') },
        { title: 'Marking', value: [d['tlp'] ? `TLP:${str(d['tlp'])}` : '', d['pap'] ? `PAP:${str(d['pap'])}` : ''].filter(Boolean).join(' · ') || 'none' },
        { title: 'Engines', value: Array.isArray(d['engines']) ? (d['engines'] as unknown[]).map(str).join(', ') : '' },
      ];
      if (typeof d['duration_ms'] === 'number') facts.push({ title: 'Took', value: `${(d['duration_ms'] / 1000).toFixed(1)} s` });
      return { title: 'oas: analysis completed', facts, data: d['started_by'] ? [`Started by ${str(d['started_by'])}`] : [], note, link };
    }
    case 'observable.verdict': {
      const verdict = str(d['verdict']);
      const reasons = Array.isArray(d['reasons']) ? (d['reasons'] as unknown[]).map(str) : [];
      const places = Array.isArray(d['found_in']) ? (d['found_in'] as unknown[]).map(str) : [];
      return {
        title: `oas: ${VERDICT_TITLE[verdict] ?? 'Verdict'} ${str(d['type']) || 'observable'}`,
        facts: [{ title: 'Verdict', value: verdict || 'unknown' }, { title: 'Type', value: str(d['type']) }],
        data: [defang(str(d['observable'])), ...(reasons.length ? [reasons.join('\n')] : []), ...(places.length ? [`Found in: ${places.join('; ')}`] : [])],
        note,
        link,
      };
    }
    case 'watchlist.changed':
      return { title: 'oas: watchlist changed', facts: [], data: watchlistLines(d), note, link };
    case 'ping':
      return { title: 'oas: test delivery', facts: [], data: ['A test message from oas webhooks test: this endpoint receives what oas delivers.'], note, link };
  }
}

/** A watchlist's changes as lines: its name, then `observable: before -> after` each. */
function watchlistLines(d: Record<string, unknown>): string[] {
  const name = str(d['watchlist'] ?? d['name']);
  const changes = Array.isArray(d['changes']) ? (d['changes'] as Record<string, unknown>[]) : [];
  const lines = changes.slice(0, 40).map((c) => `${defang(str(c?.['observable']))}: ${describe(c?.['before'])} -> ${describe(c?.['after'])}`);
  if (changes.length > 40) lines.push(`... and ${changes.length - 40} more`);
  return [...(name ? [`Watchlist ${name}`] : []), ...(lines.length ? [lines.join('\n')] : [])];
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return 'none';
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && 'verdict' in (value as object)) return str((value as { verdict: unknown }).verdict);
  return cut(JSON.stringify(value), 200);
}
