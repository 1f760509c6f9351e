/**
 * A PDF's observables (issue 35): the text of each page (`report.pdf page 2`), the URIs of its
 * link annotations (`report.pdf page 2, link`: the target, not the text shown), and the files
 * embedded in it, read as attachments are.
 *
 * Read with pdf.js (pdfjs-dist, Mozilla's PDF reader, Firefox's): it survives the malformed PDFs
 * found in the wild (a broken cross-reference table is rebuilt, a damaged page skipped), decodes
 * every font encoding to Unicode, and is kept up against hostile files; a PDF parser written here
 * would be neither. Its legacy build is the one for Node.
 *
 * Nothing in the file runs or is fetched: pdf.js is given the bytes (no URL), evaluates no code
 * (`isEvalSupported: false`: PostScript functions are interpreted, not compiled to JavaScript),
 * has no scripting sandbox or XFA (`enableXfa: false`), loads no font face, no system font, no
 * WebAssembly and fetches nothing itself (`useWorkerFetch: false`); its only reads are its own
 * character maps, from its package folder, by names it checks against its own list. Annotations'
 * actions are read as data, never followed. In Node, pdf.js runs on the calling thread (its
 * "fake worker"): src/files/read-off-thread.ts puts the whole read in a child process of ours.
 *
 * pdf.js is ~2 MB of code: it is imported when the first PDF is read, not before.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { FileReadError, type Reader } from './types.js';

type PdfJs = typeof import('pdfjs-dist/legacy/build/pdf.mjs');

let pdfjs: Promise<PdfJs> | undefined;

/** pdf.js's character maps (CJK text in fonts that are not embedded), a folder of its package. */
function cMapFolder(): string | undefined {
  try {
    return join(dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json')), 'cmaps') + '/';
  } catch {
    return undefined;
  }
}

export const readPdf: Reader = async (bytes, name, context) => {
  const lib = await (pdfjs ??= import('pdfjs-dist/legacy/build/pdf.mjs'));
  const cMapUrl = cMapFolder();
  const task = lib.getDocument({
    // pdf.js takes ownership of (detaches) the array it is given, and refuses a Node Buffer (what
    // a file read from disk is): a plain Uint8Array copy, which also keeps the caller's.
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    enableXfa: false,
    disableFontFace: true,
    useSystemFonts: false,
    useWorkerFetch: false,
    useWasm: false,
    isOffscreenCanvasSupported: false,
    isImageDecoderSupported: false,
    disableAutoFetch: true,
    disableStream: true,
    disableRange: true,
    // Recover what can be read from a damaged page rather than give up on the whole file.
    stopAtErrors: false,
    verbosity: lib.VerbosityLevel.ERRORS,
    ...(cMapUrl ? { cMapUrl, cMapPacked: true } : {}),
  });
  let doc: Awaited<typeof task.promise>;
  try {
    doc = await task.promise;
  } catch (error) {
    await task.destroy().catch(() => undefined);
    throw pdfError(name, error);
  }
  try {
    let pagesWithText = 0;
    for (let number = 1; number <= doc.numPages; number++) {
      const place = `${name} page ${number}`;
      let page: Awaited<ReturnType<typeof doc.getPage>>;
      try {
        page = await doc.getPage(number);
      } catch (error) {
        context.note(`${place}: not read (${pdfMessage(error)})`);
        continue;
      }
      try {
        const text = pageText(await page.getTextContent());
        if (text.trim()) {
          pagesWithText++;
          context.foundIn(text, place);
        }
        for (const annotation of (await page.getAnnotations({ intent: 'display' })) as Annotation[]) {
          const target = annotation.unsafeUrl ?? annotation.url;
          if (typeof target === 'string' && target) context.foundIn(target, `${place}, link`);
        }
      } catch (error) {
        context.note(`${place}: partly read (${pdfMessage(error)})`);
      } finally {
        page.cleanup();
      }
    }
    if (doc.numPages > 0 && pagesWithText === 0) context.note(`${name}: no text on any page (a scanned document? text in images is not read)`);
    await readAttachments(doc, name, context);
  } finally {
    await doc.destroy().catch(() => undefined);
  }
};

/** What pdf.js gives of an annotation (the fields read here). */
interface Annotation {
  url?: unknown;
  /** The URI as written in the file, before pdf.js checks it is an absolute URL. */
  unsafeUrl?: unknown;
}

/** A page's text as pdf.js lays it out: its items in order, a line break where a line ends. */
function pageText(content: { items: ReadonlyArray<object> }): string {
  let text = '';
  for (const item of content.items) {
    if (!('str' in item) || typeof item.str !== 'string') continue;
    text += item.str;
    if ('hasEOL' in item && item.hasEOL) text += '\n';
  }
  return text;
}

/** The files embedded in the PDF (its attachments), read as attachments of an e-mail are. */
async function readAttachments(
  doc: { getAttachments(): Promise<Record<string, { filename?: string; content?: Uint8Array }> | null> },
  name: string,
  context: Parameters<Reader>[2],
): Promise<void> {
  let attachments: Record<string, { filename?: string; content?: Uint8Array }> | null;
  try {
    attachments = await doc.getAttachments();
  } catch (error) {
    context.note(`${name}: its embedded files could not be listed (${pdfMessage(error)})`);
    return;
  }
  for (const [key, attachment] of Object.entries(attachments ?? {})) {
    if (!(attachment.content instanceof Uint8Array)) continue;
    const fileName = attachment.filename || key;
    await context.nested(attachment.content, fileName, `${name} attachment ${fileName}`);
  }
}

/** The FileReadError of a PDF pdf.js cannot open: encrypted, or what pdf.js said is wrong. */
function pdfError(name: string, error: unknown): FileReadError {
  if (error instanceof FileReadError) return error;
  if (isNamed(error, 'PasswordException')) return new FileReadError(name, 'encrypted (the PDF needs a password): remove the password and try again');
  return new FileReadError(name, `not a readable PDF (pdf.js: ${pdfMessage(error)})`);
}

/** pdf.js's message, on one line, without a stack. */
function pdfMessage(error: unknown): string {
  const message = error instanceof Object && 'message' in error && typeof error.message === 'string' ? error.message : String(error);
  const line = message.replace(/\s+/g, ' ').trim() || 'unknown error';
  return line.length > 200 ? `${line.slice(0, 199)}…` : line;
}

function isNamed(error: unknown, name: string): boolean {
  return error instanceof Object && 'name' in error && error.name === name;
}
