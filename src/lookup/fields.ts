/**
 * Building blocks for an engine's `details` (the fields its results card shows): empty values
 * drop out, lists are joined and capped, booleans read yes/no, links must be http(s).
 */
import type { DetailField } from '../engine/contract.js';

const LIST_MAX = 10;

/** The URL when it is an absolute http(s) address, else undefined: never a `javascript:` link. */
export function safeHref(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^https?:\/\//i.test(value)) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** A list as one line: `a, b, c (+4 more)`. Empty entries are skipped. */
export function listText(values: readonly unknown[], max = LIST_MAX): string {
  const items = values.filter((v) => v !== null && v !== undefined && v !== '').map(String);
  const shown = items.slice(0, max).join(', ');
  return items.length > max ? `${shown} (+${items.length - max} more)` : shown;
}

/** One field, or null when the value is empty (null, '', [], undefined). */
export function field(label: string, value: unknown, href?: string | null): DetailField | null {
  let text: string;
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) text = listText(value);
  else if (typeof value === 'boolean') text = value ? 'yes' : 'no';
  else text = String(value);
  if (text.trim() === '') return null;
  const link = safeHref(href ?? undefined);
  return link ? { label, value: text, href: link } : { label, value: text };
}

/** A link to the source's own page about the observable. */
export function sourceLink(label: string, href: string | null | undefined, text?: string): DetailField | null {
  const link = safeHref(href ?? undefined);
  return link ? { label, value: text ?? link, href: link } : null;
}

/** The non-null fields, in order. */
export function fields(...entries: (DetailField | null | undefined | false)[]): DetailField[] {
  return entries.filter((e): e is DetailField => Boolean(e));
}
