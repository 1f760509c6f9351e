/**
 * The API's results written out a piece at a time: from the stored rows, in order, in chunks of
 * about CHUNK characters. The text is exactly what serializing the whole array at once gives,
 * without ever building it. (The exports, which add the verdicts, are src/export/.)
 */
import type { ObservableResult } from '../runner/result.js';

const CHUNK = 64 * 1024;

/** Joins pieces into chunks of about CHUNK characters. */
async function* chunked(pieces: AsyncIterable<string>): AsyncGenerator<string> {
  let parts: string[] = [];
  let size = 0;
  for await (const piece of pieces) {
    parts.push(piece);
    size += piece.length;
    if (size >= CHUNK) {
      yield parts.join('');
      parts = [];
      size = 0;
    }
  }
  if (parts.length > 0) yield parts.join('');
}

/**
 * `JSON.stringify(results)` (`pretty`: `JSON.stringify(results, null, 2)`) from the results as
 * JSON texts, a page at a time; `onResult` sees each result on its way.
 */
export function jsonChunks(pages: AsyncIterable<readonly string[]>, pretty = false, onResult?: (result: ObservableResult) => void): AsyncGenerator<string> {
  return chunked((async function* () {
    let first = true;
    for await (const texts of pages) {
      for (const text of texts) {
        let element = text;
        if (pretty || onResult) {
          const result = JSON.parse(text) as ObservableResult;
          onResult?.(result);
          // An element of an indented array: its own lines indented one level more (a JSON text
          // holds no raw line break but those of the indentation).
          if (pretty) element = JSON.stringify(result, null, 2).replace(/\n/g, '\n  ');
        }
        yield first ? (pretty ? `[\n  ${element}` : `[${element}`) : (pretty ? `,\n  ${element}` : `,${element}`);
        first = false;
      }
    }
    yield first ? '[]' : (pretty ? '\n]' : ']');
  })());
}
