/**
 * An Outlook `.msg` file (MS-OXMSG: MAPI properties in a compound file), read with msgreader
 * (@kenjiuno/msgreader), the maintained JavaScript reader of Outlook's compound-file items: its
 * plain and HTML bodies, its sender, its attachments (an attached Outlook item comes out as a
 * `.msg` of its own) and its transport headers (the `Received` chain, `Authentication-Results`...,
 * kept by Outlook in PidTagTransportMessageHeaders and parsed here with postal-mime). What the
 * message holds is found by src/files/mail-message.ts, shared with the `.eml` reader.
 *
 * msgreader walks the file's structure without guarding against loops: src/files/msg-guard.ts
 * checks it first. A file msgreader cannot read is a FileReadError naming what is wrong.
 */
import MsgReaderModule from '@kenjiuno/msgreader';
import { decodeText } from './detect.js';
import { FileReadError, type Reader, type ReaderContext } from './types.js';
import { headerFieldsOf, parseHeaderBlock } from './mail-headers.js';
import { ADDRESS_FIELDS, readMailMessage, type AddressField, type MailAddress, type MailAttachment, type MailMessage } from './mail-message.js';
import { compoundFileProblem } from './msg-guard.js';

/** The fields of msgreader's answer read here (it has many more). */
interface MsgFields {
  dataType?: string | null;
  error?: string;
  headers?: string;
  body?: string;
  bodyHtml?: string;
  html?: Uint8Array;
  internetCodepage?: number;
  messageId?: string;
  senderName?: string;
  senderEmail?: string;
  senderAddressType?: string;
  senderSmtpAddress?: string;
  sentRepresentingSmtpAddress?: string;
  attachments?: MsgAttachmentFields[];
}

interface MsgAttachmentFields {
  fileName?: string;
  fileNameShort?: string;
  name?: string;
  attachMimeTag?: string;
  innerMsgContent?: boolean;
}

interface MsgReaderInstance {
  getFileData(): MsgFields;
  getAttachment(attachment: MsgAttachmentFields): { fileName: string; content: Uint8Array };
}

// msgreader is CommonJS with `exports.default`: imported from ESM, the class is the module's `default`.
const MsgReader = (MsgReaderModule as unknown as { default: new (buffer: ArrayBuffer) => MsgReaderInstance }).default;

export const readMsg: Reader = async (bytes, name, context) => {
  const problem = compoundFileProblem(bytes);
  if (problem) throw new FileReadError(name, `Outlook .msg ${problem}`);
  let reader: MsgReaderInstance;
  let fields: MsgFields;
  try {
    reader = new MsgReader(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    fields = reader.getFileData();
  } catch {
    throw new FileReadError(name, 'damaged or truncated Outlook .msg: its compound-file structure cannot be read');
  }
  if (fields.error || fields.dataType !== 'msg') throw new FileReadError(name, 'not an Outlook .msg (no compound-file signature)');
  fields = checked(fields);

  const headerPart = fields.headers?.trim() ? await transportHeaders(fields.headers) : undefined;
  const message: MailMessage = {
    ...(headerPart ?? { headers: [], addresses: senderProperties(fields) }),
    addressSource: headerPart ? 'headers' : 'properties',
    messageId: fields.messageId,
    text: fields.body,
    html: fields.bodyHtml || (fields.html ? htmlText(fields.html, fields.internetCodepage) : undefined),
    attachments: attachmentsOf(reader, fields, context),
  };
  // Transport headers without a From (a message saved before it was sent) leave the sender to the properties.
  if (headerPart && ADDRESS_FIELDS.every((field) => headerPart.addresses[field].length === 0)) {
    message.addresses = senderProperties(fields);
    message.addressSource = 'properties';
  }
  await readMailMessage(message, context);
};

/**
 * msgreader's answer with every field read here of the type this module expects: a property's
 * type comes from the file (a damaged one may store the sender as bytes), so any other is dropped.
 */
function checked(fields: MsgFields): MsgFields {
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    dataType: fields.dataType,
    headers: text(fields.headers),
    body: text(fields.body),
    bodyHtml: text(fields.bodyHtml),
    html: fields.html instanceof Uint8Array ? fields.html : undefined,
    internetCodepage: typeof fields.internetCodepage === 'number' ? fields.internetCodepage : undefined,
    messageId: text(fields.messageId),
    senderName: text(fields.senderName),
    senderEmail: text(fields.senderEmail),
    senderAddressType: text(fields.senderAddressType),
    senderSmtpAddress: text(fields.senderSmtpAddress),
    sentRepresentingSmtpAddress: text(fields.sentRepresentingSmtpAddress),
    attachments: (Array.isArray(fields.attachments) ? fields.attachments : []).map((attachment) => ({
      ...attachment,
      fileName: text(attachment.fileName),
      fileNameShort: text(attachment.fileNameShort),
      name: text(attachment.name),
      attachMimeTag: text(attachment.attachMimeTag),
      innerMsgContent: attachment.innerMsgContent === true,
    })),
  };
}

/** The transport headers parsed as a header block; undefined when postal-mime refuses them (the rest is still read). */
async function transportHeaders(text: string): Promise<Pick<MailMessage, 'headers' | 'addresses'> | undefined> {
  try {
    return headerFieldsOf(await parseHeaderBlock(text));
  } catch {
    return undefined;
  }
}

/** The sender as the item's properties give it: From is who it was sent for, Sender who sent it when another. */
function senderProperties(fields: MsgFields): Record<AddressField, MailAddress[]> {
  const sender = fields.senderSmtpAddress || (fields.senderAddressType?.toUpperCase() !== 'EX' ? fields.senderEmail : undefined);
  const from = fields.sentRepresentingSmtpAddress || sender;
  const name = fields.senderName ?? '';
  return {
    From: from ? [{ name, address: from }] : [],
    'Reply-To': [],
    'Return-Path': [],
    Sender: sender && from && sender.toLowerCase() !== from.toLowerCase() ? [{ name: '', address: sender }] : [],
  };
}

/** Windows code pages an HTML body may be stored in, by TextDecoder's label. */
const CODEPAGES: Record<number, string> = {
  65001: 'utf-8', 1200: 'utf-16le', 1201: 'utf-16be', 20127: 'us-ascii', 28591: 'iso-8859-1', 28592: 'iso-8859-2',
  28595: 'iso-8859-5', 28597: 'iso-8859-7', 28599: 'iso-8859-9', 28605: 'iso-8859-15', 1250: 'windows-1250',
  1251: 'windows-1251', 1252: 'windows-1252', 1253: 'windows-1253', 1254: 'windows-1254', 1255: 'windows-1255',
  1256: 'windows-1256', 1257: 'windows-1257', 1258: 'windows-1258', 874: 'windows-874', 932: 'shift_jis', 936: 'gbk',
  949: 'euc-kr', 950: 'big5', 20866: 'koi8-r', 21866: 'koi8-u', 50220: 'iso-2022-jp', 51932: 'euc-jp', 54936: 'gb18030',
};

/** The HTML body stored as bytes (PidTagHtml), decoded by the item's code page, else as UTF-8 or Windows-1252. */
function htmlText(bytes: Uint8Array, codepage: number | undefined): string {
  const label = codepage === undefined ? undefined : CODEPAGES[codepage];
  if (label) {
    try {
      return new TextDecoder(label).decode(bytes);
    } catch {
      // a code page this Node.js cannot decode: guessed below
    }
  }
  return decodeText(bytes);
}

/** Each attachment's bytes; one msgreader cannot give is named in a note and the others are read. */
function attachmentsOf(reader: MsgReaderInstance, fields: MsgFields, context: ReaderContext): MailAttachment[] {
  const attachments: MailAttachment[] = [];
  for (const [index, attachment] of (fields.attachments ?? []).entries()) {
    try {
      const got = reader.getAttachment(attachment);
      const fileName = typeof got.fileName === 'string' ? got.fileName : undefined;
      const content = got.content instanceof Uint8Array ? got.content : new Uint8Array(0);
      // An attached Outlook item is named by its subject (msgreader adds `.msg`).
      const filename = attachment.innerMsgContent ? (attachment.name ? fileName : null) : attachment.fileName || attachment.fileNameShort || attachment.name || fileName || null;
      attachments.push({ filename: filename || null, mimeType: attachment.innerMsgContent ? 'application/vnd.ms-outlook' : (attachment.attachMimeTag ?? '').toLowerCase(), content });
    } catch {
      context.note(`attachment ${index + 1}: damaged, its content cannot be read`);
    }
  }
  return attachments;
}
