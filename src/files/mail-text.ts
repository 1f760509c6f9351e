/**
 * Text from an e-mail made fit for a place (`link in HTML body ("View your invoice")`,
 * `attachment invoice.pdf`): one short line, nothing that a terminal, a log or a page would act
 * upon instead of showing. What a sender wrote is data: control characters (C0, C1, DEL), the
 * bidirectional embeddings, overrides and isolates, zero-width and other invisible format
 * characters are dropped (a right-to-left override in `invoice\u202Efdp.exe` would otherwise show
 * `invoiceexe.pdf`), runs of white space become one space, and a long text is cut.
 */

/** Invisible or acting characters: controls, soft hyphen, bidi marks and controls, zero-width, BOM, annotations. */
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u0008\u000e-\u001f\u007f-\u009f\u00ad\u061c\u115f\u1160\u180e\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb]/g;
/** White space of any kind, line and paragraph separators included. */
const SPACE = /[\s\u2028\u2029]+/g;

/** `text` as one line of at most `max` characters (code points), `…` ending a cut one. */
export function placeText(text: string, max = 60): string {
  // A huge text (a 1 MB display name) is cut before it is cleaned: only its start can show.
  const head = text.length > max * 8 + 64 ? text.slice(0, max * 8 + 64) : text;
  const line = head.replace(SPACE, ' ').replace(INVISIBLE, '').replace(SPACE, ' ').trim();
  const chars = Array.from(line);
  if (chars.length <= max && head.length === text.length) return line;
  if (chars.length <= max) return `${line}…`;
  return `${chars.slice(0, max - 1).join('').trimEnd()}…`;
}
