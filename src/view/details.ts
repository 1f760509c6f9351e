/**
 * The fields of a results card for an engine that does not declare its own `details`: the
 * result's own fields in order, flattened to label/value lines, with http(s) values as links.
 * Nothing here is HTML: the page puts every label and value in as text.
 */
import type { DetailFieldView } from './types.js';

const MAX_FIELDS = 40;
const MAX_LIST = 20;
const MAX_ITEMS = 10;
const MAX_TEXT = 500;

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

export function genericDetails(result: unknown): DetailFieldView[] {
  const fields: DetailFieldView[] = [];
  if (isObject(result)) addObject(fields, result, '', 0);
  else if (!isEmpty(result)) fields.push(field('value', result));
  if (fields.length > MAX_FIELDS) {
    const more = fields.length - MAX_FIELDS;
    fields.length = MAX_FIELDS;
    fields.push({ label: '…', value: `${more} more field(s): see the raw JSON` });
  }
  return fields;
}

function addObject(fields: DetailFieldView[], object: Record<string, unknown>, prefix: string, depth: number): void {
  for (const [key, value] of Object.entries(object)) {
    if (isEmpty(value)) continue;
    const label = prefix + key.replace(/_/g, ' ');
    if (Array.isArray(value)) addArray(fields, label, value);
    else if (isObject(value)) {
      if (depth < 1) addObject(fields, value, `${label} › `, depth + 1);
      else fields.push({ label, value: clip(JSON.stringify(value)) });
    } else fields.push(field(label, value));
  }
}

function addArray(fields: DetailFieldView[], label: string, values: unknown[]): void {
  const items = values.filter((v) => !isEmpty(v));
  if (items.every((v) => !isObject(v) && !Array.isArray(v))) {
    const shown = items.slice(0, MAX_LIST).map(scalarText).join(', ');
    const more = items.length > MAX_LIST ? ` (+${items.length - MAX_LIST} more)` : '';
    fields.push({ label, value: clip(shown + more) });
    return;
  }
  items.slice(0, MAX_ITEMS).forEach((item, i) => fields.push(itemField(`${label} ${i + 1}`, item)));
  if (items.length > MAX_ITEMS) fields.push({ label, value: `+${items.length - MAX_ITEMS} more: see the raw JSON` });
}

/** One line for an object in a list: its title linked to its address when it has both. */
function itemField(label: string, item: unknown): DetailFieldView {
  if (!isObject(item)) return { label, value: clip(JSON.stringify(item)) };
  const title = firstString(item, ['title', 'name', 'value', 'id']);
  const href = safeHref(item['url']) ?? safeHref(item['link']);
  if (title !== undefined && href) return { label, value: clip(title), href };
  const parts = Object.entries(item)
    .filter(([, v]) => !isEmpty(v))
    .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${isObject(v) || Array.isArray(v) ? JSON.stringify(v) : scalarText(v)}`);
  return href ? { label, value: clip(parts.join(' · ')), href } : { label, value: clip(parts.join(' · ')) };
}

function field(label: string, value: unknown): DetailFieldView {
  const href = safeHref(value);
  return href ? { label, value: clip(String(value)), href } : { label, value: clip(scalarText(value)) };
}

function scalarText(value: unknown): string {
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return String(value);
}

function firstString(object: Record<string, unknown>, keys: string[]): string | undefined {
  for (const key of keys) {
    const value = object[key];
    if (typeof value === 'string' && value.trim() !== '') return value;
  }
  return undefined;
}

function clip(text: string): string {
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isObject(value)) return Object.keys(value).length === 0;
  return false;
}
