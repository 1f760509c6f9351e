/**
 * Small helpers for engines' one-line summaries and links, so every engine words counts and
 * dates the same way.
 */

/** `1 scan`, `12 scans`; `plural` defaults to the singular plus "s". */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}

/**
 * The calendar day of an ISO 8601 / RFC 3339 timestamp as written, no time zone shift
 * (`2026-01-09T10:00:00Z` -> `2026-01-09`); null when absent or unreadable.
 */
export function isoDay(value: string | null | undefined): string | null {
  if (typeof value !== 'string') return null;
  return /^(\d{4}-\d{2}-\d{2})(?:$|[T\s])/.exec(value.trim())?.[1] ?? null;
}

/** The latest of some ISO 8601 timestamps (absent and unreadable ones ignored), or null. */
export function latest(values: readonly (string | null | undefined)[]): string | null {
  let best: { value: string; at: number } | null = null;
  for (const value of values) {
    if (typeof value !== 'string') continue;
    const at = Date.parse(value);
    if (Number.isNaN(at)) continue;
    if (!best || at > best.at) best = { value, at };
  }
  return best?.value ?? null;
}

/** An upstream's own message made fit for a one-line error: whitespace collapsed, length capped. */
export function oneLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * The first sentence of an upstream's reason: up to the first `.`, `!` or `?` followed by a space
 * and something other than a lowercase letter (so `e.g. the` and `v1.2` do not end it). What
 * follows is advice, links or trace ids (`Ensure the secret... Trace ID: ...`), not the reason.
 */
export function firstSentence(text: string): string {
  return /^.*?[.!?](?=\s+[^\s\p{Ll}])/su.exec(text)?.[0] ?? text;
}

/** Up to this many characters, an upstream's reason is kept whole (`Missing application roles. API required roles: Ip.Read.All`). */
export const SHORT_REASON = 80;

/**
 * An upstream's reason made fit for a one-line error: whitespace collapsed, cut to its first
 * sentence when longer than SHORT_REASON, length capped.
 */
export function reasonLine(text: string, max = 200): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return oneLine(flat.length > SHORT_REASON ? firstSentence(flat) : flat, max);
}
