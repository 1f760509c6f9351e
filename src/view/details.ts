/**
 * The fields of a results card for an engine that does not declare its own `details`: the
 * result's own fields in order, flattened to label/value lines with the same rules as
 * `src/lookup/fields.ts` (lists capped, yes/no, http(s) values as links), long texts clipped.
 * Nothing here is HTML: the page puts every label and value in as text.
 */
import { field, listText, safeHref } from '../lookup/fields.js';
import type { DetailFieldView } from './types.js';

const MAX_FIELDS = 40;
const MAX_LIST = 20;
const MAX_ITEMS = 10;
const MAX_TEXT = 500;

export function genericDetails(result: unknown): DetailFieldView[] {
  const fields: DetailFieldView[] = [];
  if (isObject(result)) addObject(fields, result, '', 0);
  else add(fields, field('value', result));
  if (fields.length > MAX_FIELDS) {
    const more = fields.length - MAX_FIELDS;
    fields.length = MAX_FIELDS;
    fields.push({ label: '…', value: `${more} more field(s): see the raw JSON` });
  }
  return fields;
}

function addObject(fields: DetailFieldView[], object: Record<string, unknown>, prefix: string, depth: number): void {
  for (const [key, value] of Object.entries(object)) {
    const label = prefix + key.replace(/_/g, ' ');
    if (Array.isArray(value)) addArray(fields, label, value);
    else if (isObject(value)) {
      if (depth < 1) addObject(fields, value, `${label} › `, depth + 1);
      else if (Object.keys(value).length > 0) add(fields, field(label, JSON.stringify(value)));
    } else add(fields, field(label, value, typeof value === 'string' ? value : undefined));
  }
}

function addArray(fields: DetailFieldView[], label: string, values: unknown[]): void {
  const items = values.filter((v) => v !== null && v !== undefined && v !== '');
  if (items.every((v) => !isObject(v) && !Array.isArray(v))) {
    add(fields, field(label, listText(items.map((v) => (typeof v === 'boolean' ? (v ? 'yes' : 'no') : v)), MAX_LIST)));
    return;
  }
  items.slice(0, MAX_ITEMS).forEach((item, i) => add(fields, itemField(`${label} ${i + 1}`, item)));
  if (items.length > MAX_ITEMS) fields.push({ label, value: `+${items.length - MAX_ITEMS} more: see the raw JSON` });
}

/** One line for an object in a list: its title linked to its address when it has both. */
function itemField(label: string, item: unknown): DetailFieldView | null {
  if (!isObject(item)) return field(label, JSON.stringify(item));
  const title = ['title', 'name', 'value', 'id'].map((k) => item[k]).find((v) => typeof v === 'string' && v.trim() !== '');
  const href = safeHref(item['url']) ?? safeHref(item['link']);
  if (title !== undefined && href) return field(label, title, href);
  const parts = Object.entries(item)
    .filter(([, v]) => v !== null && v !== undefined && v !== '')
    .map(([k, v]) => `${k.replace(/_/g, ' ')}: ${isObject(v) || Array.isArray(v) ? JSON.stringify(v) : field(k, v)?.value ?? ''}`);
  return field(label, parts.join(' · '), href);
}

/** Adds a field (clipped), unless it is empty. */
function add(fields: DetailFieldView[], entry: DetailFieldView | null): void {
  if (!entry) return;
  const value = entry.value.length > MAX_TEXT ? `${entry.value.slice(0, MAX_TEXT)}…` : entry.value;
  fields.push({ ...entry, value });
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
