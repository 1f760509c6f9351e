/**
 * A file handed to oas by a person or a program (issue 35: `oas extract`, `oas analyze --file`,
 * `POST /api/extract`, a multipart `POST /api/analyze`, MCP's `file_base64`), read within the
 * limits every surface applies the same way: at most `max_upload_bytes`, read off the caller's
 * thread and given up after `file_parse_timeout_ms`. The bytes are read, never kept.
 */
import { readFileOffThread } from './read-off-thread.js';
import { placeText } from './mail-text.js';
import { FileReadError, type FileExtraction, type ReadOptions } from './types.js';

/** The settings that bound a file. */
export interface UploadLimits {
  /** Setting max_upload_bytes. */
  maxUploadBytes: number;
  /** Setting file_parse_timeout_ms. */
  parseTimeoutMs: number;
  /** A server's: files are read at a lower priority, so that it keeps answering meanwhile. */
  background?: boolean;
}

/** A file over max_upload_bytes (HTTP 413, CLI exit 2). */
export class FileTooLargeError extends FileReadError {
  override name = 'FileTooLargeError';
  constructor(fileName: string, bytes: number, max: number) {
    super(fileName, `${bytes} bytes, more than max_upload_bytes (${max}): split it, or raise max_upload_bytes`);
  }
}

export function uploadLimits(config: { max_upload_bytes: number; file_parse_timeout_ms: number }): UploadLimits {
  return { maxUploadBytes: config.max_upload_bytes, parseTimeoutMs: config.file_parse_timeout_ms };
}

/** Refuses a file of `bytes` bytes over the limit before anything reads it. */
export function checkUploadSize(name: string, bytes: number, limits: UploadLimits): void {
  if (bytes > limits.maxUploadBytes) throw new FileTooLargeError(name, bytes, limits.maxUploadBytes);
}

/** The observables of the file, or FileReadError (FileTooLargeError) naming it and what is wrong. */
export async function readUpload(bytes: Uint8Array, name: string, limits: UploadLimits, options: ReadOptions = {}): Promise<FileExtraction> {
  checkUploadSize(name, bytes.byteLength, limits);
  return readFileOffThread(bytes, displayName(name), { ...options, timeoutMs: limits.parseTimeoutMs, background: limits.background ?? false });
}

/**
 * The name a file goes by in places and errors: its last path segment as one short line with
 * nothing that acts on a terminal, log or page (placeText: a name is the sender's choice), at most
 * 100 characters; `file` if nothing is left.
 */
export function displayName(name: string): string {
  return placeText(name.split(/[\\/]/).pop() ?? '', 100) || 'file';
}
