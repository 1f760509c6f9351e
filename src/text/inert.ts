/**
 * Text from outside (an upstream's answer, a file, an observable) made inert where it is written
 * for people: on a terminal and in a log line. C0 and C1 control characters (ESC, BEL, CR, BS, CSI
 * U+009B...), DEL, the line and paragraph separators (U+2028, U+2029) and the bidirectional
 * embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) are written as visible
 * escapes (`\x1b`, `\n`, `\u202e`), so that an answer such as `"\u001b]0;pwned\u0007\u001b[2J"`
 * shows what it holds instead of retitling the window and clearing the screen, and a line break
 * never forges a line of its own. Every other character, accents, scripts and emoji included, is
 * left as it is; a text without any of them comes back unchanged, so applying it twice is applying
 * it once.
 *
 * JSON keeps its own escapes: `jsonInert` writes the characters JSON.stringify leaves raw (C1, the
 * separators, bidi controls) as `\u` escapes of the same value.
 */

/** What a terminal or a log viewer may act upon rather than show. */
// eslint-disable-next-line no-control-regex
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** What JSON.stringify leaves raw among them (it escapes C0 itself). */
const JSON_UNSAFE = /[\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
/** What a document shown on a terminal (CSV) keeps: its line breaks and tabs. */
// eslint-disable-next-line no-control-regex
const DOCUMENT_UNSAFE = /\r(?!\n)|[\u0000-\u0008\u000b-\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const SHORT: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** `\t`, `\n`, `\r`; `\x1b` up to U+00FF; `\u202e` above. */
function visible(ch: string): string {
  const short = SHORT[ch];
  if (short !== undefined) return short;
  const code = ch.charCodeAt(0);
  return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`;
}

function unicodeEscape(ch: string): string {
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** Every control character, separator and bidi control of `text` as a visible escape. */
export function inert(text: string): string {
  return text.replace(UNSAFE, visible);
}

/** One line for a terminal or a log: runs of white space (line breaks, tabs) as one space, then inert. */
export function inertLine(text: string): string {
  return inert(text.replace(/\s+/g, ' '));
}

/** A document for a terminal (CSV): its line breaks (LF, CRLF) and tabs kept, every other control visible. */
export function inertDocument(text: string): string {
  return text.replace(DOCUMENT_UNSAFE, visible);
}

/**
 * A JSON text with the characters JSON.stringify leaves raw (DEL, C1, U+2028, U+2029, bidi
 * controls) written as `\u` escapes: the same JSON value, inert on a terminal. They can only be
 * inside strings, where such an escape is valid.
 */
export function jsonInert(json: string): string {
  return json.replace(JSON_UNSAFE, unicodeEscape);
}

/**
 * Rows as columns padded to their widest cell, two spaces apart, each cell one inert line (a
 * value, a name or a note from outside never breaks the layout or reaches the terminal raw):
 * the lists of `oas users`, `oas watch`, `oas allow` and `oas marks`.
 */
export function inertColumns(rows: readonly (readonly string[])[]): string {
  const cells = rows.map((row) => row.map(inertLine));
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}
