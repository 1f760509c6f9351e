/**
 * What a file holds (issue 35): its observables, each with where it was found, in the order they
 * first appear in the file. Made by the readers of this folder, one per format; read by
 * `oas extract`, `oas analyze --file`, `POST /api/extract`, `POST /api/analyze` (multipart) and
 * the MCP tools.
 */
import type { Observable } from '../observables/types.js';

/** The formats a file is read as (detected from its bytes first, its name second). */
export const FILE_KINDS = ['eml', 'msg', 'pdf', 'csv', 'tsv', 'json', 'text', 'binary'] as const;
export type FileKind = (typeof FILE_KINDS)[number];

/** An observable of a file and every place it was found (short, human: `Received header 2`). */
export interface FoundObservable extends Observable {
  found_in: string[];
}

/** The `Authentication-Results` outcomes of an e-mail (`pass`, `fail`, `softfail`, `none`, ...). */
export interface EmailAuth {
  spf?: string;
  dkim?: string;
  dmarc?: string;
  /** The authserv-id of the header read (the receiving system that wrote it). */
  authserv_id?: string;
}

export interface FileExtraction {
  /** The file as given: its name (as the caller named it), format and size; never its content. */
  file: { name: string; kind: FileKind; bytes: number };
  observables: FoundObservable[];
  /** An e-mail's SPF, DKIM and DMARC outcomes (absent for other formats, or without the header). */
  email_auth?: EmailAuth;
  /** What the reader could not read but went on without (an attachment too deep, a broken part). */
  notes: string[];
}

/** Where an analysis's observables came from, when files (what its record keeps of them): for the record, the audit and the results page. */
export interface AnalysisSource {
  /** Each file's format, extension (lower case, without the dot; empty when none) and size. */
  files: { kind: string; ext: string; bytes: number }[];
  /** The first e-mail's SPF, DKIM and DMARC outcomes (its Authentication-Results header). */
  email_auth?: EmailAuth;
}

/** A file that cannot be read: malformed, encrypted, truncated, too large once unpacked, too slow. */
export class FileReadError extends Error {
  override name = 'FileReadError';
  constructor(readonly fileName: string, readonly problem: string) {
    super(`${fileName}: ${problem}`);
  }
}

/** Options every reader takes. */
export interface ReadOptions {
  /** CSV/TSV: read only these columns (header names; `--column`, repeatable). Else every cell. */
  columns?: readonly string[] | undefined;
  /** How deep attachments are opened (the file itself is 0); default 3. */
  maxDepth?: number | undefined;
  /** Most bytes all the parts unpacked from the file may add up to (zip bombs); default 256 MiB. */
  maxUnpackedBytes?: number | undefined;
}

/** Types whose values are the same whatever their case (names, addresses, hex hashes). */
const CASELESS = new Set<Observable['type']>(['FQDN', 'Email', 'MD5', 'SHA1', 'SHA256']);

/** Places kept per observable; past them, a last entry says how many more times it was found. */
export const MAX_PLACES = 50;

/**
 * Gathers observables in first-appearance order, merging the places of one found more than once
 * (its `found_in` keeps each place once, in the order they were met, up to MAX_PLACES: a value
 * repeated on every row of a large CSV costs one entry a row, not a search of the list).
 */
export class ObservableCollector {
  private readonly byKey = new Map<string, { observable: Observable; places: Set<string>; more: number }>();

  /** `observable` found at `place`; without a place, with the places it has (`found_in`), if any. */
  add(observable: Observable, place?: string): void {
    const key = `${observable.type}\0${CASELESS.has(observable.type) ? observable.value.toLowerCase() : observable.value}`;
    let known = this.byKey.get(key);
    if (!known) this.byKey.set(key, (known = { observable: { value: observable.value, type: observable.type }, places: new Set(), more: 0 }));
    for (const where of place !== undefined ? [place] : observable.found_in ?? []) {
      if (known.places.has(where)) continue;
      if (known.places.size < MAX_PLACES) known.places.add(where);
      else known.more++;
    }
  }

  addAll(observables: readonly Observable[], place: string): void {
    for (const observable of observables) this.add(observable, place);
  }

  get size(): number {
    return this.byKey.size;
  }

  /** In the order they were first added; `found_in` absent only for those added without a place. */
  list(): Observable[] {
    return [...this.byKey.values()].map(({ observable, places, more }) => (places.size > 0 ? { ...observable, found_in: placesOf(places, more) } : observable));
  }

  /** The same, for a collector every observable of which was added with a place (a file's). */
  found(): FoundObservable[] {
    return [...this.byKey.values()].map(({ observable, places, more }) => ({ ...observable, found_in: placesOf(places, more) }));
  }
}

function placesOf(places: ReadonlySet<string>, more: number): string[] {
  const list = [...places];
  if (more > 0) list.push(`found ${more} more time${more === 1 ? '' : 's'}`);
  return list;
}

/**
 * What a reader is given besides the bytes: where to put what it finds, and how to read a file it
 * contains (an attachment), which the dispatcher (src/files/read.ts) reads at `depth + 1` with the
 * attachment's places prefixed (`attachment invoice.pdf, page 2`).
 */
export interface ReaderContext {
  /** The file itself is 0; its attachments 1; theirs 2... */
  readonly depth: number;
  readonly options: ReadOptions;
  /** Records an observable found at `place` (the context adds the prefix of nested files). */
  found(observable: Observable, place: string): void;
  /** Records every observable of `text` (refanged, extracted as a pasted text is) at `place`. */
  foundIn(text: string, place: string): void;
  /** Something the reader could not read but went on without (named in the extraction's notes). */
  note(text: string): void;
  /** An e-mail's authentication outcomes (kept for the file itself only, depth 0). */
  emailAuth(auth: EmailAuth): void;
  /**
   * Reads a contained file (an attachment) as its own format; `place` names it
   * (`attachment invoice.pdf`). Past the depth limit it is hashed only, with a note.
   */
  nested(bytes: Uint8Array, name: string, place: string): Promise<void>;
}

/** One format's reader: finds what `bytes` holds and tells `context`; throws FileReadError when it cannot be read. */
export type Reader = (bytes: Uint8Array, name: string, context: ReaderContext) => Promise<void>;
