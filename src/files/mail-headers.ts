/**
 * An e-mail's header fields as postal-mime parsed them, made into the parts of a `MailMessage`
 * (src/files/mail-message.ts): the fields in file order and the addresses of From, Reply-To,
 * Return-Path and Sender, each field's every occurrence read (a message with two `From` headers
 * shows one or the other depending on the client; both are told). The `.eml` reader parses the
 * whole file; the `.msg` reader parses only its transport headers (a header block alone).
 *
 * postal-mime (see src/files/email.ts for why) decodes RFC 2047 encoded words in display names
 * and unfolds folded lines; its address parser handles groups, comments and quoting.
 */
import PostalMime, { addressParser, type Email } from 'postal-mime';
import { ADDRESS_FIELDS, type AddressField, type MailAddress, type MailMessage } from './mail-message.js';

/** postal-mime's limits, stated here rather than left to its defaults: 2 MiB of headers, parts 256 deep. */
export const POSTAL_MIME_LIMITS = { maxHeadersSize: 2 * 1024 * 1024, maxNestingDepth: 256 } as const;

/** The header fields and addresses of a parsed message. */
export function headerFieldsOf(email: Email): Pick<MailMessage, 'headers' | 'addresses'> {
  const headers = email.headers.map(({ key, value }) => ({ key, value }));
  const addresses = {} as Record<AddressField, MailAddress[]>;
  for (const field of ADDRESS_FIELDS) {
    const key = field.toLowerCase();
    const list: MailAddress[] = [];
    for (const header of headers) {
      if (header.key !== key || !header.value.trim()) continue;
      for (const { name, address } of addressParser(header.value, { flatten: true })) {
        if (address) list.push({ name: name ?? '', address });
      }
    }
    addresses[field] = list;
  }
  return { headers, addresses };
}

/** A header block alone (a .msg's transport headers) parsed as a message without a body. */
export async function parseHeaderBlock(text: string): Promise<Email> {
  return PostalMime.parse(`${text.replace(/[\r\n]+$/, '')}\r\n\r\n`, { ...POSTAL_MIME_LIMITS, forceRfc822Attachments: true });
}
