/**
 * Files posted to the API (issue 35): `multipart/form-data` with one or more `file` parts, to
 * `POST {prefix}extract` and `POST {prefix}analyze`. The body is bounded by `max_upload_bytes`
 * (plus room for the form's other fields), each file read off the event loop within
 * `file_parse_timeout_ms` (src/files/upload.ts), and only a few at once: past that, 503 with
 * Retry-After rather than a queue of parsers. The bytes are never kept.
 */
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { FileReadError, type FileExtraction, type ReadOptions } from '../files/types.js';
import { FileTooLargeError, readUpload, type UploadLimits } from '../files/upload.js';

/** Room for the form's fields and part headers beyond the file itself. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
/** Files read at once by one server; another upload meanwhile gets 503. */
const MAX_READS_AT_ONCE = 4;

export function isMultipart(c: Context): boolean {
  return /^multipart\/form-data\s*;/i.test(c.req.header('content-type') ?? '');
}

/** A request the caller can fix: its status and one line. */
export class UploadError extends Error {
  override name = 'UploadError';
  constructor(readonly status: 400 | 413 | 415 | 422 | 503, message: string, readonly retryAfterSeconds?: number) {
    super(message);
  }
}

/** The body limit of a multipart request: max_upload_bytes and the form's own bytes. */
export function uploadBodyLimit(limits: UploadLimits) {
  return bodyLimit({
    maxSize: limits.maxUploadBytes + FORM_OVERHEAD_BYTES,
    onError: (c) => c.json({ error: `upload larger than max_upload_bytes (${limits.maxUploadBytes} bytes): send a smaller file, or raise max_upload_bytes` }, 413),
  });
}

export interface PostedForm {
  /** The `file` parts, in order, each read as its format. */
  files: FileExtraction[];
  /** The other fields, each as text (the last of a repeated one). */
  fields: Map<string, string>;
}

let reading = 0;

/** Reads the form and its files, or throws UploadError. */
export async function readPostedForm(c: Context, limits: UploadLimits, options: ReadOptions = {}): Promise<PostedForm> {
  let form: FormData;
  try {
    form = await c.req.formData();
  } catch {
    throw new UploadError(400, 'request body is not a valid multipart/form-data form');
  }
  const fields = new Map<string, string>();
  const parts: File[] = [];
  for (const [name, value] of form.entries()) {
    if (name === 'file') {
      if (typeof value === 'string') throw new UploadError(400, '"file" must be a file part (a form field with a filename), not text');
      parts.push(value);
    } else if (typeof value === 'string') fields.set(name, value);
  }
  if (parts.length === 0) throw new UploadError(400, 'no "file" part in the form: send the file as multipart/form-data field "file"');
  const columns = fields.get('column');
  const readOptions = { ...options, ...(columns ? { columns: columns.split(',').map((s) => s.trim()).filter(Boolean) } : {}) };
  if (reading + parts.length > MAX_READS_AT_ONCE) throw new UploadError(503, `server busy: ${reading} file(s) being read; retry in 2 s`, 2);
  reading += parts.length;
  try {
    const files: FileExtraction[] = [];
    for (const part of parts) {
      const bytes = new Uint8Array(await part.arrayBuffer());
      files.push(await readUpload(bytes, part.name || 'file', limits, readOptions));
    }
    return { files, fields };
  } catch (error) {
    if (error instanceof FileTooLargeError) throw new UploadError(413, error.message);
    if (error instanceof FileReadError) throw new UploadError(422, `${error.fileName}: ${error.problem}`);
    throw error;
  } finally {
    reading -= parts.length;
  }
}

/** The answer to an UploadError. */
export function uploadErrorResponse(c: Context, error: UploadError): Response {
  return c.json({ error: error.message }, error.status, error.retryAfterSeconds ? { 'Retry-After': String(error.retryAfterSeconds) } : undefined);
}
