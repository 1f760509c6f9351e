/**
 * An `.eml` file (RFC 5322 / MIME), read with postal-mime: a maintained MIME parser without
 * dependencies that decodes RFC 2047 encoded words and RFC 2231 parameters, base64 and
 * quoted-printable bodies and charsets, bounds what a hostile message may cost (header bytes,
 * nesting depth) and never fetches anything. What the message holds is found by
 * src/files/mail-message.ts, shared with the `.msg` reader.
 *
 * Attached messages (`message/rfc822`) are kept as attachments rather than merged into the body,
 * so that the dispatcher reads each as a file of its own, places prefixed and depth counted.
 * A file that is not an e-mail, is encrypted, or exceeds postal-mime's limits is a FileReadError;
 * a multipart cut before its closing boundary is read as far as it goes, with a note.
 */
import { Buffer } from 'node:buffer';
import PostalMime, { type Email } from 'postal-mime';
import { FileReadError, type Reader } from './types.js';
import { headerFieldsOf, POSTAL_MIME_LIMITS } from './mail-headers.js';
import { readMailMessage } from './mail-message.js';

/** Header fields only a mail message has; a file with none of them is not one. */
const MAIL_FIELDS = new Set([
  'received', 'return-path', 'mime-version', 'message-id', 'from', 'to', 'cc', 'subject', 'date', 'reply-to', 'sender',
  'delivered-to', 'dkim-signature', 'authentication-results', 'x-mailer', 'received-spf', 'in-reply-to', 'references',
]);

export const readEml: Reader = async (bytes, name, context) => {
  let email: Email;
  try {
    email = await PostalMime.parse(bytes, { ...POSTAL_MIME_LIMITS, forceRfc822Attachments: true, attachmentEncoding: 'arraybuffer' });
  } catch (error) {
    throw new FileReadError(name, parseProblem(error));
  }
  if (!email.headers.some((header) => MAIL_FIELDS.has(header.key))) {
    throw new FileReadError(name, 'not an e-mail: no RFC 5322 header (From, To, Subject, Date, Received...) at its start');
  }
  const contentType = email.headers.find((header) => header.key === 'content-type')?.value ?? '';
  const encrypted = encryption(contentType);
  if (encrypted) throw new FileReadError(name, `encrypted (${encrypted}): its body and attachments cannot be read without the recipient's key`);
  if (/^\s*application\/(x-)?pkcs7-mime/i.test(contentType)) {
    context.note('signed S/MIME (opaque): its content is inside the signature, read as an attachment (smime.p7m) for its hashes only');
  }
  if (cutShort(bytes, contentType)) context.note('the message ends before its closing MIME boundary (truncated?): read as far as it goes');

  await readMailMessage(
    {
      ...headerFieldsOf(email),
      addressSource: 'headers',
      text: email.text,
      html: email.html,
      attachments: email.attachments.map((attachment) => ({
        filename: attachment.filename,
        mimeType: attachment.mimeType,
        content: typeof attachment.content === 'string' ? new TextEncoder().encode(attachment.content) : new Uint8Array(attachment.content),
      })),
    },
    context,
  );
};

/** What an error of postal-mime means for the analyst. */
function parseProblem(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (/header size/i.test(message)) return `its headers are larger than ${POSTAL_MIME_LIMITS.maxHeadersSize / 1024 / 1024} MiB (not read)`;
  if (/nesting depth/i.test(message)) return `its MIME parts are nested more than ${POSTAL_MIME_LIMITS.maxNestingDepth} levels deep (not read)`;
  return 'malformed MIME message: it cannot be parsed';
}

/** `S/MIME` or `OpenPGP` when the message's own Content-Type says its body is encrypted. */
function encryption(contentType: string): string | undefined {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  if (type === 'multipart/encrypted') return /pgp-encrypted/i.test(contentType) ? 'OpenPGP' : 'multipart/encrypted';
  if (type === 'application/pkcs7-mime' || type === 'application/x-pkcs7-mime') {
    const smimeType = /smime-type\s*=\s*"?([A-Za-z-]+)/i.exec(contentType)?.[1]?.toLowerCase();
    if (smimeType !== 'signed-data' && smimeType !== 'certs-only' && smimeType !== 'compressed-data') return 'S/MIME';
  }
  return undefined;
}

/** True when the top-level multipart's closing boundary (`--boundary--`) is nowhere in the file. */
function cutShort(bytes: Uint8Array, contentType: string): boolean {
  if (!/^\s*multipart\//i.test(contentType)) return false;
  const boundary = /boundary\s*=\s*(?:"([^"]{1,200})"|([^\s;]{1,200}))/i.exec(contentType);
  const value = boundary?.[1] ?? boundary?.[2];
  if (!value) return false;
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf(`--${value}--`) < 0;
}
