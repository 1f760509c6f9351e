/** Escaping for HTML text and attribute values: everything shown may be attacker controlled. */
const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (ch) => ENTITIES[ch]!);
}
