/**
 * A JSON file (issue 35), such as an alert exported by a SIEM or an EDR: the observables of every
 * string value, at any depth, each placed by a short path (`field alert.source.ip`,
 * `field hits[3].url`); and an object's key when the whole key is one (a map keyed by domain or
 * address: `field lookups["evil.com"]`). JSON Lines (one document a line, as Elastic and Splunk
 * export) are read line by line (`line 3, field src`).
 *
 * Parsed with the runtime's JSON.parse (V8's: exact, fast, and iterative, so 10 000 levels of
 * nesting parse); walked here with a stack of our own, never by recursion, so depth costs memory,
 * not the call stack. A path is kept as a chain of segments and written out only for a string that
 * holds something, cut in the middle when long: a deep document costs no quadratic string work.
 */
import { decodeText } from './detect.js';
import { identifyObservable } from '../observables/extract.js';
import { FileReadError, type Reader, type ReaderContext } from './types.js';

/** A path longer than this is written as its start, `…`, and its end. */
const MAX_PATH = 120;
/** A key longer than this is cut in its path segment. */
const MAX_KEY = 40;

/**
 * Top-level domains that are also words of dotted field names (`host.name`, `user.id`,
 * `user.email`, `event.group`...): such a key is a field, not a domain.
 */
const FIELD_WORD_TLDS = new Set([
  'name', 'id', 'email', 'group', 'app', 'info', 'page', 'link', 'data', 'host', 'date', 'time', 'site',
  'network', 'country', 'city', 'zone', 'phone', 'mobile', 'run', 'dev', 'zip', 'mov', 'new', 'one',
  'live', 'type', 'hash', 'domain', 'code', 'codes', 'events', 'services', 'support', 'video', 'photo',
]);

export const readJson: Reader = async (bytes, name, context) => {
  const text = decodeText(bytes);
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    const lines = jsonLines(text);
    if (!lines) throw new FileReadError(name, `not valid JSON (${oneLine(error)})`);
    for (const { number, line } of lines) {
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch (lineError) {
        throw new FileReadError(name, `not valid JSON Lines (line ${number}: ${oneLine(lineError)})`);
      }
      walk(record, context, `line ${number}`);
    }
    return;
  }
  walk(document, context, '');
};

/** The non-empty lines of a text when there are at least two and the first is an object or array. */
function jsonLines(text: string): Array<{ number: number; line: string }> | undefined {
  const lines = text.split(/\r?\n/).flatMap((line, i) => (line.trim() ? [{ number: i + 1, line }] : []));
  if (lines.length < 2) return undefined;
  try {
    const first: unknown = JSON.parse(lines[0]!.line);
    return typeof first === 'object' && first !== null ? lines : undefined;
  } catch {
    return undefined;
  }
}

/** A path: segments chained to their parent, with the path's start and length kept as it grows. */
interface PathNode {
  parent: PathNode | undefined;
  /** `.key`, `key` (first), `["odd key"]` or `[3]`. */
  segment: string;
  /** Characters of the whole path. */
  length: number;
  /** The path's first characters (at least MAX_PATH / 2 when it is that long). */
  head: string;
}

function child(parent: PathNode | undefined, key: string | number): PathNode {
  let segment: string;
  if (typeof key === 'number') segment = `[${key}]`;
  else if (/^[A-Za-z_$@][\w$@-]*$/.test(key) && key.length <= MAX_KEY) segment = parent ? `.${key}` : key;
  else segment = `[${JSON.stringify(key.length > MAX_KEY ? `${key.slice(0, MAX_KEY)}…` : key)}]`;
  const head = !parent ? segment : parent.head.length >= MAX_PATH / 2 ? parent.head : parent.head + segment;
  return { parent, segment, length: (parent?.length ?? 0) + segment.length, head };
}

/** The path written out: whole when short, else its start, `…` and its last segments. */
function render(node: PathNode | undefined): string {
  if (!node) return '(the whole document)';
  if (node.length <= MAX_PATH) {
    const segments: string[] = [];
    for (let at: PathNode | undefined = node; at; at = at.parent) segments.push(at.segment);
    return segments.reverse().join('');
  }
  let tail = '';
  for (let at: PathNode | undefined = node; at && tail.length < MAX_PATH / 2; at = at.parent) tail = at.segment + tail;
  return `${node.head.slice(0, MAX_PATH / 2)}…${tail.slice(-MAX_PATH / 2)}`;
}

interface Frame {
  path: PathNode | undefined;
  /** An array's items, or an object's values, with the key of each. */
  keys: Array<string | number>;
  values: unknown[];
  next: number;
}

/** Every string of `value` (and every key that is an observable) into `context`, in document order. */
function walk(value: unknown, context: ReaderContext, prefix: string): void {
  const placeOf = (path: PathNode | undefined) => {
    const field = path ? `field ${render(path)}` : '';
    return prefix && field ? `${prefix}, ${field}` : prefix || field || 'field (the whole document)';
  };
  const frames: Frame[] = [];
  const visit = (item: unknown, path: PathNode | undefined) => {
    if (typeof item === 'string') {
      if (item.trim()) context.foundIn(item, placeOf(path));
    } else if (Array.isArray(item)) {
      frames.push({ path, keys: item.map((_, i) => i), values: item, next: 0 });
    } else if (item !== null && typeof item === 'object') {
      const keys = Object.keys(item);
      frames.push({ path, keys, values: keys.map((key) => (item as Record<string, unknown>)[key]), next: 0 });
    }
  };
  visit(value, undefined);
  while (frames.length > 0) {
    const frame = frames[frames.length - 1]!;
    if (frame.next >= frame.keys.length) {
      frames.pop();
      continue;
    }
    const i = frame.next++;
    const key = frame.keys[i]!;
    const path = child(frame.path, key);
    if (typeof key === 'string') {
      const observable = keyObservable(key);
      if (observable) context.found(observable, placeOf(path));
    }
    visit(frame.values[i], path);
  }
}

/**
 * The observable a key is, when the whole key is one: an address, URL, hash or e-mail address, or
 * a domain that is not a dotted field name (`host.name`, `user.id`: see FIELD_WORD_TLDS).
 */
function keyObservable(key: string): ReturnType<typeof identifyObservable> {
  // Cheap test first: a key with no dot, colon or long run of hex digits is none of them.
  if (!/[.:]|[0-9a-fA-F]{32}|dot/.test(key)) return null;
  const observable = identifyObservable(key);
  if (observable?.type === 'FQDN' && FIELD_WORD_TLDS.has(observable.value.slice(observable.value.lastIndexOf('.') + 1).toLowerCase())) return null;
  return observable;
}

function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.replace(/\s+/g, ' ').trim();
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}
