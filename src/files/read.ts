/**
 * A file's observables (issue 35): its format detected (src/files/detect.ts), read by that
 * format's reader, attachments read the same way up to `maxDepth` levels below the file, every
 * observable with the places it was found. Runs on whatever thread calls it: the surfaces call it
 * through src/files/read-off-thread.ts, which bounds its time and memory.
 */
import { createHash } from 'node:crypto';
import { decodeText, detectKind } from './detect.js';
import { extractObservables } from '../observables/extract.js';
import {
  FileReadError,
  ObservableCollector,
  type EmailAuth,
  type FileExtraction,
  type FileKind,
  type ReadOptions,
  type Reader,
  type ReaderContext,
} from './types.js';

const DEFAULT_MAX_DEPTH = 3;
const DEFAULT_MAX_UNPACKED = 256 * 1024 * 1024;

/** Each format's reader, imported when a file of that format comes (pdf.js alone is ~2 MB of code). */
const READERS: Record<FileKind, () => Promise<Reader>> = {
  eml: async () => (await import('./email.js')).readEml,
  msg: async () => (await import('./msg.js')).readMsg,
  pdf: async () => (await import('./pdf.js')).readPdf,
  csv: async () => (await import('./table.js')).readCsv,
  tsv: async () => (await import('./table.js')).readTsv,
  json: async () => (await import('./json.js')).readJson,
  text: async () => readText,
  binary: async () => readBinary,
};

/** The file's observables, in the order they first appear, each with where it was found. */
export async function readFileObservables(bytes: Uint8Array, name: string, options: ReadOptions = {}): Promise<FileExtraction> {
  const collector = new ObservableCollector();
  const notes: string[] = [];
  let auth: EmailAuth | undefined;
  let unpacked = 0;
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const maxUnpacked = options.maxUnpackedBytes ?? DEFAULT_MAX_UNPACKED;
  const kind = detectKind(bytes, name);

  const contextFor = (depth: number, prefix: string, fileName: string): ReaderContext => {
    const placed = (place: string) => (prefix ? `${prefix}, ${place}` : place);
    const context: ReaderContext = {
      depth,
      options,
      found: (observable, place) => collector.add(observable, placed(place)),
      foundIn: (text, place) => collector.addAll(extractObservables(text), placed(place)),
      note: (text) => notes.push(prefix ? `${prefix}: ${text}` : text),
      emailAuth: (value) => {
        if (depth === 0) auth = value;
      },
      nested: async (inner, innerName, place) => {
        unpacked += inner.byteLength;
        if (unpacked > maxUnpacked) throw new FileReadError(fileName, `unpacks to more than ${maxUnpacked} bytes (a zip bomb?)`);
        const innerPlace = placed(place);
        addHashes(inner, innerPlace, collector);
        if (depth + 1 > maxDepth) {
          notes.push(`${innerPlace}: not opened (more than ${maxDepth} levels deep); its hashes only`);
          return;
        }
        const innerKind = detectKind(inner, innerName);
        if (innerKind === 'binary') return;
        try {
          await (await READERS[innerKind]())(inner, innerName, contextFor(depth + 1, innerPlace, innerName));
        } catch (error) {
          // A broken attachment is named in the notes; the message it came in is still read.
          if (error instanceof FileReadError && !/zip bomb/.test(error.problem)) notes.push(`${innerPlace}: ${error.problem}`);
          else throw error;
        }
      },
    };
    return context;
  };

  await (await READERS[kind]())(bytes, name, contextFor(0, '', name));
  return { file: { name, kind, bytes: bytes.byteLength }, observables: collector.found(), ...(auth ? { email_auth: auth } : {}), notes };
}

/** MD5, SHA-1 and SHA-256 of `bytes`, computed here (the bytes are never sent anywhere). */
export function hashesOf(bytes: Uint8Array): { MD5: string; SHA1: string; SHA256: string } {
  return {
    MD5: createHash('md5').update(bytes).digest('hex'),
    SHA1: createHash('sha1').update(bytes).digest('hex'),
    SHA256: createHash('sha256').update(bytes).digest('hex'),
  };
}

function addHashes(bytes: Uint8Array, place: string, collector: ObservableCollector): void {
  const hashes = hashesOf(bytes);
  collector.add({ value: hashes.MD5, type: 'MD5' }, `${place} (MD5)`);
  collector.add({ value: hashes.SHA1, type: 'SHA1' }, `${place} (SHA-1)`);
  collector.add({ value: hashes.SHA256, type: 'SHA256' }, `${place} (SHA-256)`);
}

/** A text file: as pasted text, each observable placed by its line. */
const readText: Reader = async (bytes, name, context) => {
  const text = decodeText(bytes);
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim()) context.foundIn(lines[i]!, `${name} line ${i + 1}`);
  }
};

/** A binary of no kind read here: its hashes only. */
const readBinary: Reader = async (bytes, name, context) => {
  const hashes = hashesOf(bytes);
  context.found({ value: hashes.MD5, type: 'MD5' }, `${name} (MD5)`);
  context.found({ value: hashes.SHA1, type: 'SHA1' }, `${name} (SHA-1)`);
  context.found({ value: hashes.SHA256, type: 'SHA256' }, `${name} (SHA-256)`);
};
