/**
 * What an e-mail holds, whichever format it came in: the `.eml` reader (src/files/email.ts,
 * postal-mime) and the Outlook `.msg` reader (src/files/msg.ts, msgreader) each make a
 * `MailMessage` of their file and hand it here, so that both find the same observables at the
 * same places.
 *
 * Order: the headers first, as they appear in the file (a header's observables when it is met),
 * then the text body, the HTML body (a multipart/alternative puts the plain text first) and the
 * attachments, in their order. `Received` headers are numbered from the top, as they appear in
 * the file: `Received header 1` is the last hop (added by the receiving system), the highest
 * number the first (nearest the sender). `Authentication-Results` is read from the topmost such
 * header only (the receiving system's; one below may have been written by the sender).
 *
 * Every string is data: it is matched, never interpreted, and what of it is shown in a place is
 * cut short and stripped of control and bidi characters (src/files/mail-text.ts).
 */
import { extractObservables, identifyObservable } from '../observables/extract.js';
import type { ReaderContext } from './types.js';
import { parseAuthenticationResults } from './mail-auth.js';
import { readHtmlBody } from './mail-html.js';
import { receivedHosts } from './mail-received.js';
import { placeText } from './mail-text.js';

export interface MailAddress {
  /** The display name (decoded), '' without one. */
  name: string;
  address: string;
}

export interface MailAttachment {
  /** As the message names it, or null when it names none. */
  filename: string | null;
  /** Its media type, lower case (`application/pdf`, `message/rfc822`), '' when unknown. */
  mimeType: string;
  content: Uint8Array;
}

/** The address fields read, each named as its header. */
export const ADDRESS_FIELDS = ['From', 'Reply-To', 'Return-Path', 'Sender'] as const;
export type AddressField = (typeof ADDRESS_FIELDS)[number];

export interface MailMessage {
  /** The message's own header fields in file order (key lower case, value unfolded). */
  headers: readonly { key: string; value: string }[];
  /** The addresses of each field; a field absent from `headers` (a .msg's sender property) is told after them. */
  addresses: Record<AddressField, readonly MailAddress[]>;
  /** Where the addresses came from: header fields (`From header`) or a .msg's properties (`From (message properties)`). */
  addressSource: 'headers' | 'properties';
  /** The Message-ID when not among `headers` (a .msg without transport headers). */
  messageId?: string | undefined;
  text?: string | undefined;
  html?: string | undefined;
  attachments: readonly MailAttachment[];
}

/** Tells `context` everything `message` holds (see the module's header for the order and places). */
export async function readMailMessage(message: MailMessage, context: ReaderContext): Promise<void> {
  const told = new Set<AddressField>();
  let hop = 0;
  let authRead = false;
  let messageIdRead = false;
  for (const { key, value } of message.headers) {
    const field = ADDRESS_FIELDS.find((name) => name.toLowerCase() === key);
    if (field) {
      if (!told.has(field)) foundAddresses(message, field, context);
      told.add(field);
    } else if (key === 'received') {
      hop++;
      for (const observable of receivedHosts(value)) context.found(observable, `Received header ${hop}`);
    } else if (key === 'message-id' && !messageIdRead) {
      messageIdRead = true;
      foundMessageId(value, context);
    } else if (key === 'authentication-results' && !authRead) {
      authRead = true;
      const auth = parseAuthenticationResults(value);
      if (auth) context.emailAuth(auth);
    }
  }
  for (const field of ADDRESS_FIELDS) if (!told.has(field)) foundAddresses(message, field, context);
  if (!messageIdRead && message.messageId) foundMessageId(message.messageId, context);

  if (message.text) foundInText(message.text, context);
  if (message.html) await readHtmlBody(message.html, context);

  const places = new Set<string>();
  for (let i = 0; i < message.attachments.length; i++) {
    const attachment = message.attachments[i]!;
    const { name, label } = attachmentName(attachment, i + 1);
    let place = `attachment ${label}`;
    // Two attachments of one name stay apart: their hashes and contents have places of their own.
    for (let n = 2; places.has(place); n++) place = `attachment ${label} (${n})`;
    places.add(place);
    await context.nested(attachment.content, name, place);
  }
}

/** A field's addresses and their domains, then any indicator in their display names (a spoofed `"paypal.com" <x@evil.example>`). */
function foundAddresses(message: MailMessage, field: AddressField, context: ReaderContext): void {
  const place = message.addressSource === 'headers' ? `${field} header` : `${field} (message properties)`;
  for (const { name, address } of message.addresses[field]) {
    const email = identifyObservable(address);
    if (email?.type === 'Email') {
      context.found(email, place);
      const domain = identifyObservable(email.value.slice(email.value.lastIndexOf('@') + 1));
      if (domain?.type === 'FQDN') context.found(domain, `domain of ${place}`);
    }
    if (name) context.foundIn(name.length > 4096 ? name.slice(0, 4096) : name, `display name of ${place}`);
  }
}

/** The domain after the `@` of a Message-ID (`<id@mail.example.com>`). */
function foundMessageId(value: string, context: ReaderContext): void {
  const id = value.trim().replace(/^<|>$/g, '');
  const domain = identifyObservable(id.slice(id.lastIndexOf('@') + 1));
  if (id.includes('@') && domain?.type === 'FQDN') context.found(domain, 'Message-ID header');
}

/** The text body: its URLs are links (`link in text body`), the rest is `text body`. */
function foundInText(text: string, context: ReaderContext): void {
  for (const observable of extractObservables(text)) {
    context.found(observable, observable.type === 'URL' ? 'link in text body' : 'text body');
  }
}

const EXTENSIONS: Record<string, string> = {
  'message/rfc822': 'eml',
  'application/vnd.ms-outlook': 'msg',
  'application/pdf': 'pdf',
  'text/csv': 'csv',
  'text/tab-separated-values': 'tsv',
  'application/json': 'json',
  'text/plain': 'txt',
  'text/html': 'html',
};

/**
 * The attachment's file name, given to the dispatcher (which reads its extension), and how its
 * place names it: its own name, or `2 (unnamed, message/rfc822)` with `attachment-2.eml`.
 */
function attachmentName(attachment: MailAttachment, index: number): { name: string; label: string } {
  const named = attachment.filename ? placeText(attachment.filename, 80) : '';
  if (named) return { name: named, label: named };
  const type = placeText(attachment.mimeType, 60);
  return { name: `attachment-${index}.${EXTENSIONS[attachment.mimeType] ?? 'bin'}`, label: `${index} (unnamed${type ? `, ${type}` : ''})` };
}
