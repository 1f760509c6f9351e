/**
 * Results written out a piece at a time: from the stored rows, in order, in chunks of about CHUNK
 * characters. The text is exactly what serializing the whole array at once gives, without ever
 * building it. Used by the API's results and by the JSON export (src/export/json.ts).
 */
import type { ObservableResult } from '../runner/result.js';
import type { StoredResult } from '../store/analysis-store.js';

const CHUNK = 64 * 1024;

/** Joins pieces into chunks of about `size` characters. */
export async function* chunked(pieces: AsyncIterable<string>, size = CHUNK): AsyncGenerator<string> {
  let parts: string[] = [];
  let length = 0;
  for await (const piece of pieces) {
    parts.push(piece);
    length += piece.length;
    if (length >= size) {
      yield parts.join('');
      parts = [];
      length = 0;
    }
  }
  if (parts.length > 0) yield parts.join('');
}

/**
 * `JSON.stringify(results)` (`pretty`: `JSON.stringify(results, null, 2)`) from the stored results
 * (JSON texts), a page at a time; `element` turns each result into what the array holds (the JSON
 * export adds the verdict stored with it).
 */
export function jsonChunks(
  pages: AsyncIterable<readonly StoredResult[]>,
  pretty = false,
  element?: (result: ObservableResult, stored: StoredResult) => unknown,
): AsyncGenerator<string> {
  return chunked((async function* () {
    let first = true;
    for await (const page of pages) {
      for (const stored of page) {
        const text = stored.value;
        let item = text;
        if (pretty || element) {
          const value = element ? element(JSON.parse(text) as ObservableResult, stored) : JSON.parse(text);
          // An element of an indented array: its own lines indented one level more (a JSON text
          // holds no raw line break but those of the indentation).
          item = pretty ? JSON.stringify(value, null, 2).replace(/\n/g, '\n  ') : JSON.stringify(value);
        }
        yield first ? (pretty ? `[\n  ${item}` : `[${item}`) : (pretty ? `,\n  ${item}` : `,${item}`);
        first = false;
      }
    }
    yield first ? '[]' : (pretty ? '\n]' : ']');
  })());
}
