/**
 * The files of `oas analyze --file PATH` and `oas extract FILE` (issue 35): each read from disk
 * (or standard input for `-`) within max_upload_bytes, then read as its format off the main
 * thread within file_parse_timeout_ms. A file that cannot be read is a usage error (exit 2)
 * naming it and what is wrong.
 */
import { readFile, stat } from 'node:fs/promises';
import { FileReadError, type FileExtraction, type ReadOptions } from '../files/types.js';
import { checkUploadSize, readUpload, uploadLimits, type UploadLimits } from '../files/upload.js';
import { UsageError } from './errors.js';
import { readStreamBytes } from './output.js';

/** What `-` is called in places and errors. */
export const STDIN_NAME = 'standard input';

/** The bytes of the file at `path` (`-`: standard input), refused past the limit before they are read. */
export async function fileBytes(path: string, limits: UploadLimits): Promise<Uint8Array> {
  if (path === '-') {
    if (process.stdin.isTTY) throw new UsageError('--file -: standard input is a terminal; pipe a file in (oas analyze --file - < message.eml)');
    const bytes = await readStreamBytes(process.stdin, limits.maxUploadBytes);
    if (bytes === undefined) throw new UsageError(`${STDIN_NAME}: more than max_upload_bytes (${limits.maxUploadBytes}) bytes: split it, or raise max_upload_bytes`);
    return bytes;
  }
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new UsageError(`${path}: not a file`);
    size = info.size;
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): check the path`);
  }
  try {
    checkUploadSize(path, size, limits);
    return await readFile(path);
  } catch (error) {
    if (error instanceof FileReadError) throw new UsageError(error.message);
    throw new UsageError(`${path}: cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)}): check the path and its permissions`);
  }
}

/**
 * Each file's observables, in the order given, within the limits of `config` (max_upload_bytes,
 * file_parse_timeout_ms); the first that cannot be read stops them all.
 */
export async function readInputFiles(paths: readonly string[], config: Parameters<typeof uploadLimits>[0], options: ReadOptions = {}): Promise<FileExtraction[]> {
  const limits = uploadLimits(config);
  const files: FileExtraction[] = [];
  for (const path of paths) {
    const bytes = await fileBytes(path, limits);
    files.push(await readOne(bytes, path === '-' ? STDIN_NAME : path, limits, options));
  }
  return files;
}

/** One file's observables; FileReadError becomes the one-line usage error (exit 2). */
export async function readOne(bytes: Uint8Array, name: string, limits: UploadLimits, options: ReadOptions = {}): Promise<FileExtraction> {
  try {
    return await readUpload(bytes, name, limits, options);
  } catch (error) {
    if (error instanceof FileReadError) throw new UsageError(`${error.fileName}: ${error.problem}`);
    throw error;
  }
}
