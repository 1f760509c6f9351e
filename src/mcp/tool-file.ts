/**
 * A file handed to an MCP tool (issue 35): `file_base64` (its bytes, standard or URL-safe base64)
 * and `file_name` (how it is named in places and errors; its extension helps tell its format).
 * Checked before anything reads it: base64 that is not, or more bytes than `max_upload_bytes`, is
 * a tool error naming what to fix; then read within the same limits as the API's uploads
 * (readUpload: off the thread, `file_parse_timeout_ms`). The bytes are never kept.
 */
import { FileReadError, type FileExtraction } from '../files/types.js';
import { checkUploadSize, displayName, FileTooLargeError, readUpload, type UploadLimits } from '../files/upload.js';
import { ToolError, type ToolFile } from './backend.js';

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * The file's bytes, or ToolError: not base64, empty, or over max_upload_bytes (counted from the
 * base64's length before decoding, so that an oversized file is never held twice).
 */
export function decodeToolFile(base64: string, name: string | undefined, limits: UploadLimits): ToolFile {
  const fileName = displayName(name ?? 'file');
  const compact = base64.replace(/\s+/g, '');
  if (!BASE64.test(compact) || compact.replace(/=+$/, '').length % 4 === 1) {
    throw new ToolError(`"file_base64" is not valid base64 (${fileName}): send the file's bytes encoded as base64 (RFC 4648)`);
  }
  const digits = compact.replace(/=+$/, '').length;
  const bytes = Math.floor((digits * 3) / 4);
  if (bytes === 0) throw new ToolError(`"file_base64" is empty (${fileName}): send the file's bytes encoded as base64`);
  try {
    checkUploadSize(fileName, bytes, limits);
  } catch (error) {
    if (error instanceof FileTooLargeError) throw new ToolError(error.message);
    throw error;
  }
  // Node's base64 decoder takes the URL-safe alphabet too.
  return { name: fileName, bytes: new Uint8Array(Buffer.from(compact, 'base64')) };
}

/** The file read as its format, or ToolError naming the file and what is wrong with it. */
export async function readToolFile(file: ToolFile, limits: UploadLimits): Promise<FileExtraction> {
  try {
    return await readUpload(file.bytes, file.name, limits);
  } catch (error) {
    if (error instanceof FileReadError) throw new ToolError(`${error.fileName}: ${error.problem}`);
    throw error;
  }
}
