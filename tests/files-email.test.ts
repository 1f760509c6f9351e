/**
 * The e-mail readers (issue 35): `.eml` (src/files/email.ts, postal-mime) and Outlook `.msg`
 * (src/files/msg.ts, msgreader), both finding what a message holds through
 * src/files/mail-message.ts. Everything goes through the dispatcher, `readFileObservables`, as
 * the surfaces call it: the observables, each with its `found_in`, in the order they first
 * appear; attachments hashed and read as files of their own (places prefixed, depth bounded);
 * the SPF, DKIM and DMARC outcomes. Then the malformed and hostile files: each gives a result or
 * a FileReadError naming the file, never another error, never a hang. The corpus is built at
 * test time (tests/helpers/corpus-email.ts); nothing is sent anywhere.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { before, describe, test } from 'node:test';
import { readFileObservables } from '../src/files/read.js';
import { FileReadError, type FileExtraction, type FoundObservable } from '../src/files/types.js';
import { parseAuthenticationResults } from '../src/files/mail-auth.js';
import {
  BIDI_EML,
  PHISH,
  SCRIPT_LINKS_EML,
  SMIME_EML,
  deepMultipartEml,
  directoryLoopMsg,
  emlWith,
  garbageBytes,
  hugeHeaderEml,
  hugeStreamMsg,
  loopingMsg,
  nestedEml,
  outlookMsg,
  oversizedHeaderEml,
  phishingEml,
  phishingMsg,
  truncatedEml,
} from './helpers/corpus-email.js';

/** `TYPE value ← place; place` lines: a result reads as a table in a failure's diff. */
function rows(observables: readonly FoundObservable[]): string[] {
  return observables.map((o) => `${o.type} ${o.value} ← ${o.found_in.join('; ')}`);
}

function find(result: FileExtraction, value: string): FoundObservable | undefined {
  return result.observables.find((o) => o.value === value);
}

function hashes(bytes: Uint8Array): { MD5: string; SHA1: string; SHA256: string } {
  const of = (algorithm: string) => createHash(algorithm).update(bytes).digest('hex');
  return { MD5: of('md5'), SHA1: of('sha1'), SHA256: of('sha256') };
}

/** Nothing a terminal or a page would act upon, one line, short. */
const UNSAFE_IN_PLACE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\ufeff]/;

function assertPlacesSafe(result: FileExtraction): void {
  for (const observable of result.observables) {
    for (const place of observable.found_in) {
      assert.doesNotMatch(place, UNSAFE_IN_PLACE, `place of ${observable.value}: ${JSON.stringify(place)}`);
      assert.ok(place.length <= 400, `place of ${observable.value} is ${place.length} characters long`);
    }
  }
  for (const note of result.notes) assert.doesNotMatch(note, UNSAFE_IN_PLACE, `note ${JSON.stringify(note)}`);
}

/** The file's result, or its FileReadError; anything else thrown fails the test. */
async function readOrRefuse(bytes: Uint8Array, name: string): Promise<FileExtraction | FileReadError> {
  try {
    return await readFileObservables(bytes, name);
  } catch (error) {
    assert.ok(error instanceof FileReadError, `${name}: ${String(error)} is not a FileReadError`);
    assert.equal(error.fileName, name);
    assert.ok(error.message.startsWith(`${name}: `), error.message);
    return error;
  }
}

async function refused(bytes: Uint8Array, name: string): Promise<FileReadError> {
  const outcome = await readOrRefuse(bytes, name);
  assert.ok(outcome instanceof FileReadError, `${name} was read: ${JSON.stringify(outcome)}`);
  return outcome;
}

describe('a reported phishing e-mail (.eml)', () => {
  let bytes: Uint8Array;
  let pdf: Uint8Array;
  let result: FileExtraction;
  /** The observables of the message itself (not of its attachments). */
  let own: FoundObservable[];
  before(async () => {
    ({ bytes, pdf } = await phishingEml());
    result = await readFileObservables(bytes, PHISH.name);
    own = result.observables.filter((o) => !o.found_in[0]!.startsWith('attachment '));
  });

  test('read as an e-mail, nothing left unread', () => {
    assert.deepEqual(result.file, { name: PHISH.name, kind: 'eml', bytes: bytes.byteLength });
    assert.deepEqual(result.notes, ['HTML body: a link to a javascript: URL, not an observable (not followed)']);
    assertPlacesSafe(result);
  });

  test('the headers and bodies: every observable where it was found, in the order it first appears', () => {
    assert.deepEqual(rows(own), [
      'Email bounce-7731@bounce-mailer.org ← Return-Path header',
      'FQDN bounce-mailer.org ← domain of Return-Path header',
      'FQDN mail-relay.paypa1-secure.com ← Received header 1; Received header 2',
      'IPv4 45.33.32.156 ← Received header 1',
      'FQDN mx1.victim-corp.com ← Received header 1',
      'FQDN origin.bulk-sender.io ← Received header 3; Received header 4',
      'IPv6 2a03:2880:f12f:83:face:b00c:0:25de ← Received header 3',
      'Email service@paypa1-secure.com ← From header',
      'FQDN paypa1-secure.com ← domain of From header',
      'Email mailer@bulk-sender.io ← Sender header',
      'FQDN bulk-sender.io ← domain of Sender header',
      'Email billing-help@reply-harvest.net ← Reply-To header',
      'FQDN reply-harvest.net ← domain of Reply-To header',
      'FQDN mailer.paypa1-secure.com ← Message-ID header',
      'URL https://evil-login.com/paypal/verify?id=7 ← link in text body; link in HTML body (shows "https://www.paypal.com/signin", goes to evil-login.com)',
      'IPv4 91.219.236.166 ← text body',
      'FQDN paypal.com ← HTML body',
      'URL https://www.paypal.com/signin ← HTML body',
      'URL http://185.234.72.10/invoice/8841 ← link in HTML body ("View your invoice")',
      'URL https://paypal.com.account-check.net/login ← link in HTML body (shows "paypal.com", goes to paypal.com.account-check.net)',
      'URL https://www.paypal.com/help ← link in HTML body ("www.paypal.com/help")',
      'FQDN www.paypal.com ← HTML body',
      'Email refunds@reply-harvest.net ← link in HTML body ("Contact us")',
      'URL https://img-link.net/go ← link in HTML body (image "PayPal logo")',
      'MD5 44d88612fea8a8f36de82e1278abb02f ← HTML body',
    ]);
  });

  test('the Received chain: numbered from the top, private, loopback, shared and made-up hosts left out, and only from/by clauses', () => {
    for (const absent of ['10.20.30.40', '192.168.1.23', 'fd00::25', '127.0.0.1', '100.64.0.7', 'internal-gw.corp.lan', 'corp.lan', 'sender-pc', 'localhost']) {
      assert.equal(find(result, absent), undefined, absent);
    }
    // The recipient of `for <...>` is the victim, not the sender: not read from the header.
    assert.equal(find(result, 'bob@other-recipient.org'), undefined);
    assert.equal(find(result, 'other-recipient.org'), undefined);
    const hops = result.observables.flatMap((o) => o.found_in).filter((place) => place.startsWith('Received header'));
    assert.deepEqual([...new Set(hops)].sort(), ['Received header 1', 'Received header 2', 'Received header 3', 'Received header 4']);
  });

  test('links: the href, not the text shown; nothing from scripts, styles, comments or image sources (nothing fetched)', () => {
    for (const absent of ['script-only.com', 'https://script-only.com/collect', 'tracker-css.com', 'https://tracker-css.com/pixel.png', 'comment-only.com', 'remote-image.com', 'https://remote-image.com/logo.png']) {
      assert.equal(find(result, absent), undefined, absent);
    }
    // The text shown is still text of the body: the URL the victim saw is listed, as the body's text.
    assert.deepEqual(find(result, 'https://www.paypal.com/signin')?.found_in, ['HTML body']);
    // A link to another page of the site it shows is no mismatch.
    assert.deepEqual(find(result, 'https://www.paypal.com/help')?.found_in, ['link in HTML body ("www.paypal.com/help")']);
  });

  test('a relative link goes where the page\'s <base href> says; without one, or to an anchor of the page, nowhere', async () => {
    const html = (head: string) =>
      Buffer.from(['From: a@base-trick.com', 'Subject: base', 'Content-Type: text/html; charset=utf-8', '', `<html><head>${head}</head><body><a href="login?u=1">Sign in</a> <a href="#top">top</a></body></html>`, ''].join('\r\n'));
    const based = await readFileObservables(html('<base href="https://base-host.net/x/">'), 'based.eml');
    assert.deepEqual(rows(based.observables).slice(2), ['URL https://base-host.net/x/login?u=1 ← link in HTML body ("Sign in")']);
    const plain = await readFileObservables(html(''), 'relative.eml');
    assert.deepEqual(rows(plain.observables).slice(2), []);
    assert.deepEqual(plain.notes, []);
  });

  test('email_auth: the topmost Authentication-Results (the receiving system), not the one the sender wrote below it', () => {
    assert.deepEqual(result.email_auth, { authserv_id: PHISH.authservId, ...PHISH.auth });
  });

  test('the PDF attachment: its hashes computed here from its bytes, its text read with places prefixed', () => {
    const expected = hashes(pdf);
    assert.deepEqual(find(result, expected.MD5)?.found_in, ['attachment invoice.pdf (MD5)']);
    assert.deepEqual(find(result, expected.SHA1)?.found_in, ['attachment invoice.pdf (SHA-1)']);
    assert.deepEqual(find(result, expected.SHA256)?.found_in, ['attachment invoice.pdf (SHA-256)']);
    for (const value of ['c2.bad-actor.net', '193.42.33.7']) {
      const places = find(result, value)?.found_in ?? [];
      assert.equal(places.length, 1, value);
      assert.match(places[0]!, /^attachment invoice\.pdf, .*page 2/, value);
    }
  });

  test('the attached e-mail: hashed, then read as an e-mail of its own, its places prefixed, its Authentication-Results not the file\'s', () => {
    const attached = result.observables.filter((o) => o.found_in.some((place) => place.startsWith('attachment forwarded.eml')));
    assert.deepEqual(
      rows(attached).map((row) => row.replace(/^(MD5|SHA1|SHA256) [0-9a-f]+/, '$1 <hash>')),
      [
        'MD5 <hash> ← attachment forwarded.eml (MD5)',
        'SHA1 <hash> ← attachment forwarded.eml (SHA-1)',
        'SHA256 <hash> ← attachment forwarded.eml (SHA-256)',
        'Email ceo@lookalike-corp.com ← attachment forwarded.eml, From header',
        'FQDN lookalike-corp.com ← attachment forwarded.eml, domain of From header',
        'FQDN mail.lookalike-corp.com ← attachment forwarded.eml, Message-ID header',
        'URL https://second-stage.org/pay ← attachment forwarded.eml, link in text body',
        'IPv4 77.91.124.20 ← attachment forwarded.eml, text body',
      ],
    );
    assert.equal(result.email_auth?.authserv_id, PHISH.authservId);
  });

  test('attachments come after the message\'s own observables, in their order', () => {
    const firstAttachment = result.observables.findIndex((o) => o.found_in[0]!.startsWith('attachment '));
    assert.equal(firstAttachment, own.length);
    const pdfAt = result.observables.findIndex((o) => o.found_in[0]!.startsWith('attachment invoice.pdf'));
    const emlAt = result.observables.findIndex((o) => o.found_in[0]!.startsWith('attachment forwarded.eml'));
    assert.ok(pdfAt < emlAt);
  });
});

describe('attachments within attachments', () => {
  test('read 3 levels below the file by default; the 4th is hashed only, with a note', async () => {
    const result = await readFileObservables(nestedEml(6), 'nested.eml');
    for (const level of [0, 1, 2, 3]) assert.ok(find(result, `level-${level}.com`), `level-${level}.com`);
    for (const level of [4, 5]) assert.equal(find(result, `level-${level}.com`), undefined, `level-${level}.com`);
    const deepest = 'attachment level-1.eml, attachment level-2.eml, attachment level-3.eml';
    assert.deepEqual(find(result, 'level-3.com')?.found_in, [`${deepest}, text body`]);
    assert.ok(result.observables.some((o) => o.type === 'SHA256' && o.found_in[0] === `${deepest}, attachment level-4.eml (SHA-256)`));
    assert.deepEqual(result.notes, [`${deepest}, attachment level-4.eml: not opened (more than 3 levels deep); its hashes only`]);
  });

  test('maxDepth bounds it: 1 reads the attachment, not the attachment\'s attachment', async () => {
    const result = await readFileObservables(nestedEml(4), 'nested.eml', { maxDepth: 1 });
    assert.ok(find(result, 'level-1.com'));
    assert.equal(find(result, 'level-2.com'), undefined);
  });

  test('an attachment without a name: placed by its position and type, read by its type', async () => {
    const inner = emlWith('inner text naming unnamed-inner.com');
    const raw = emlWith('outer', { name: 'x', raw: inner }).replace('Content-Disposition: attachment; filename="x"', 'Content-Disposition: attachment');
    const result = await readFileObservables(Buffer.from(raw), 'unnamed.eml');
    assert.deepEqual(find(result, 'unnamed-inner.com')?.found_in, ['attachment 1 (unnamed, message/rfc822), text body']);
  });

  test('two attachments of one name keep places of their own', async () => {
    const raw = [
      'From: a@twin-names.com', 'Subject: twins', 'Content-Type: multipart/mixed; boundary="t"', '',
      '--t', 'Content-Type: text/plain; name="notes.txt"', 'Content-Disposition: attachment; filename="notes.txt"', '', 'first-twin.com',
      '--t', 'Content-Type: text/plain; name="notes.txt"', 'Content-Disposition: attachment; filename="notes.txt"', '', 'second-twin.com',
      '--t--', '',
    ].join('\r\n');
    const result = await readFileObservables(Buffer.from(raw), 'twins.eml');
    assert.match(find(result, 'first-twin.com')!.found_in[0]!, /^attachment notes\.txt, /);
    assert.match(find(result, 'second-twin.com')!.found_in[0]!, /^attachment notes\.txt \(2\), /);
  });
});

describe('an Outlook .msg', () => {
  test('transport headers, sender, bodies (the HTML one decoded by its code page) and attachments, an attached Outlook item included', async () => {
    const { bytes, attachment } = phishingMsg();
    const result = await readFileObservables(bytes, 'invoice-overdue.msg');
    assert.equal(result.file.kind, 'msg');
    assert.deepEqual(result.notes, []);
    assertPlacesSafe(result);
    const expected = hashes(attachment);
    const item = result.observables.filter((o) => o.found_in[0]!.startsWith('attachment Earlier message.msg'));
    assert.deepEqual(rows(result.observables.filter((o) => !item.includes(o))), [
      'FQDN outbound.invoice-portal.net ← Received header 1; Received header 2; Message-ID header',
      'IPv4 185.225.17.93 ← Received header 1',
      'FQDN mx2.victim-corp.com ← Received header 1',
      'Email billing@microsoft-billing.com ← From header',
      'FQDN microsoft-billing.com ← domain of From header',
      'Email accounts@invoice-portal.net ← Reply-To header',
      'FQDN invoice-portal.net ← domain of Reply-To header',
      'URL https://pay-invoice-now.com/inv/991 ← link in text body; link in HTML body (shows "https://account.microsoft.com/billing", goes to pay-invoice-now.com)',
      'URL https://account.microsoft.com/billing ← HTML body',
      `MD5 ${expected.MD5} ← attachment remittance.txt (MD5)`,
      `SHA1 ${expected.SHA1} ← attachment remittance.txt (SHA-1)`,
      `SHA256 ${expected.SHA256} ← attachment remittance.txt (SHA-256)`,
      'URL https://remit-portal.org/pay ← attachment remittance.txt, remittance.txt line 2',
      'IPv4 5.188.206.14 ← attachment remittance.txt, remittance.txt line 3',
    ]);
    // The attached Outlook item: msgreader writes it out as a .msg of its own, which is hashed and read.
    assert.deepEqual(rows(item).map((row) => row.replace(/^(MD5|SHA1|SHA256) [0-9a-f]+/, '$1 <hash>')), [
      'MD5 <hash> ← attachment Earlier message.msg (MD5)',
      'SHA1 <hash> ← attachment Earlier message.msg (SHA-1)',
      'SHA256 <hash> ← attachment Earlier message.msg (SHA-256)',
      'Email first@notice-sender.net ← attachment Earlier message.msg, From (message properties)',
      'FQDN notice-sender.net ← attachment Earlier message.msg, domain of From (message properties); attachment Earlier message.msg, text body',
    ]);
    assert.deepEqual(result.email_auth, { authserv_id: 'mx2.victim-corp.com', spf: 'pass', dkim: 'none', dmarc: 'fail' });
  });

  test('without transport headers: the sender from the item\'s properties, no email_auth', async () => {
    const bytes = outlookMsg({ subject: 'draft', senderName: 'Draft', senderEmail: 'draft@props-only.com', body: 'see props-body.net' });
    const result = await readFileObservables(bytes, 'draft.msg');
    assert.deepEqual(rows(result.observables), [
      'Email draft@props-only.com ← From (message properties)',
      'FQDN props-only.com ← domain of From (message properties)',
      'FQDN props-body.net ← text body',
    ]);
    assert.equal(result.email_auth, undefined);
  });

  test('an .msg attached to an e-mail is read as an Outlook item', async () => {
    const msg = outlookMsg({ subject: 'inner', body: 'inner msg names msg-in-eml.com', senderEmail: 'x@msg-in-eml.com' });
    const raw = [
      'From: outer@carrier-mail.com', 'Subject: carrier', 'Content-Type: multipart/mixed; boundary="m"', '',
      '--m', 'Content-Type: application/vnd.ms-outlook; name="item.msg"', 'Content-Disposition: attachment; filename="item.msg"',
      'Content-Transfer-Encoding: base64', '', Buffer.from(msg).toString('base64'), '--m--', '',
    ].join('\r\n');
    const result = await readFileObservables(Buffer.from(raw), 'carrier.eml');
    assert.deepEqual(find(result, 'msg-in-eml.com')?.found_in, ['attachment item.msg, domain of From (message properties)', 'attachment item.msg, text body']);
    assert.deepEqual(find(result, hashes(msg).SHA256)?.found_in, ['attachment item.msg (SHA-256)']);
  });
});

describe('Authentication-Results (RFC 8601)', () => {
  test('the authserv-id, then the first result of each method; comments, versions and quoted values do not confuse it', () => {
    assert.deepEqual(
      parseAuthenticationResults('mx.example.com 1; spf=pass (sender dkim=fail in a comment) smtp.mailfrom=a.com; dkim/1 = neutral header.b="a;dkim=pass"; dkim=pass; dmarc=bestguesspass'),
      { authserv_id: 'mx.example.com', spf: 'pass', dkim: 'neutral', dmarc: 'bestguesspass' },
    );
    assert.deepEqual(parseAuthenticationResults('mx.example.com; none'), { authserv_id: 'mx.example.com' });
    assert.deepEqual(parseAuthenticationResults('  ; spf=pass'), undefined);
    assert.deepEqual(parseAuthenticationResults('(unclosed comment; spf=pass'), undefined);
    assert.deepEqual(parseAuthenticationResults('mx.a.com;SPF=SoftFail;DKIM=TempError;DMARC=None'), { authserv_id: 'mx.a.com', spf: 'softfail', dkim: 'temperror', dmarc: 'none' });
  });
});

describe('malformed and hostile e-mails: a result or a FileReadError naming the file, never another error, never a hang', { timeout: 60_000 }, () => {
  test('truncated MIME (cut inside the base64 HTML body): what is there is read, with a note', async () => {
    const result = await readOrRefuse(await truncatedEml(), 'cut.eml');
    assert.ok(!(result instanceof FileReadError));
    assert.deepEqual(find(result, '45.33.32.156')?.found_in, ['Received header 1']);
    assert.deepEqual(result.notes, ['the message ends before its closing MIME boundary (truncated?): read as far as it goes']);
    assertPlacesSafe(result);
  });

  test('binary garbage named .eml: refused as no e-mail; with NUL bytes it is a binary, hashed only', async () => {
    const garbage = garbageBytes(4096, 3);
    const error = await refused(garbage, 'garbage.eml');
    assert.match(error.problem, /^not an e-mail/);
    const withNul = garbageBytes(4096, 3, true);
    const result = await readOrRefuse(withNul, 'nul-garbage.eml');
    assert.ok(!(result instanceof FileReadError));
    assert.equal(result.file.kind, 'binary');
    assert.deepEqual(result.observables.map((o) => o.value), Object.values(hashes(withNul)));
  });

  test('an empty file named .eml is no e-mail', async () => {
    assert.match((await refused(new Uint8Array(0), 'empty.eml')).problem, /^not an e-mail/);
  });

  test('a header of 1 MB (a Received of 16 000 hops, a display name of 1 MB) is read, in linear time, places short', async () => {
    const started = Date.now();
    const result = await readOrRefuse(hugeHeaderEml(), 'huge-header.eml');
    assert.ok(Date.now() - started < 20_000, `${Date.now() - started} ms`);
    assert.ok(!(result instanceof FileReadError));
    assert.deepEqual(find(result, 'h16383.huge-hop.net')?.found_in, ['Received header 1']);
    assert.deepEqual(find(result, 'bulk@huge-header.com')?.found_in, ['From header']);
    assert.deepEqual(find(result, 'after-huge-header.com')?.found_in, ['text body']);
    assertPlacesSafe(result);
  });

  test('headers over 2 MiB: refused, saying so', async () => {
    assert.match((await refused(oversizedHeaderEml(), 'oversized.eml')).problem, /headers are larger than 2 MiB/);
  });

  test('control and bidi characters in display names, link texts and file names never reach a place', async () => {
    const result = await readOrRefuse(BIDI_EML, 'bidi.eml');
    assert.ok(!(result instanceof FileReadError));
    assertPlacesSafe(result);
    assert.deepEqual(find(result, 'https://bidi-trick.com/x')?.found_in, ['link in HTML body ("Click ereh[31m")']);
    const long = find(result, 'https://long-text.com/')!.found_in[0]!;
    assert.match(long, /^link in HTML body \("very long link text .*…"\)$/);
    assert.ok(long.length < 90, long);
    // The override hid `.exe`: without it the real name shows.
    assert.ok(result.observables.some((o) => o.type === 'SHA256' && o.found_in[0] === 'attachment invoicefdp.exe (SHA-256)'));
  });

  test('javascript: and data: links are no observables and nothing inside them is read; a note counts them', async () => {
    const result = await readOrRefuse(SCRIPT_LINKS_EML, 'script-links.eml');
    assert.ok(!(result instanceof FileReadError));
    for (const absent of ['js-exfil.com', 'https://js-exfil.com/steal', 'data-uri-target.com', 'https://data-uri-target.com']) {
      assert.equal(find(result, absent), undefined, absent);
    }
    assert.deepEqual(find(result, 'https://plain-link.com/')?.found_in, ['link in HTML body ("four")']);
    assert.deepEqual(result.notes, [
      'HTML body: 2 links to javascript: URLs, not an observable (not followed)',
      'HTML body: a link to a data: URL, not an observable (not followed)',
    ]);
  });

  test('1000 nested multiparts: refused, naming the nesting', async () => {
    assert.match((await refused(deepMultipartEml(1000), 'deep.eml')).problem, /nested more than 256 levels deep/);
  });

  test('an HTML body of 20 000 nested tags and 5 000 unclosed links: read without recursion, each link placed by its own text', async () => {
    const html = `${'<div><span>'.repeat(10_000)}nested-deep.com${Array.from({ length: 5000 }, (_, i) => `<a href="https://l${i}.unclosed-links.com/">t${i} `).join('')}`;
    const bytes = Buffer.from(['From: a@deep-html.com', 'Subject: deep', 'Content-Type: text/html', '', html, ''].join('\r\n'));
    const result = await readOrRefuse(bytes, 'deep-html.eml');
    assert.ok(!(result instanceof FileReadError));
    assert.deepEqual(find(result, 'nested-deep.com')?.found_in, ['HTML body']);
    assert.deepEqual(find(result, 'https://l4999.unclosed-links.com/')?.found_in, ['link in HTML body ("t4999")']);
  });

  test('an S/MIME encrypted message: refused, saying it is encrypted', async () => {
    assert.match((await refused(SMIME_EML, 'secret.eml')).problem, /^encrypted \(S\/MIME\)/);
  });

  test('a broken attachment is a note; the message around it is still read', async () => {
    const raw = [
      'From: a@broken-attachment.com', 'Subject: x', 'Content-Type: multipart/mixed; boundary="z"', '',
      '--z', 'Content-Type: text/plain', '', 'outer names outer-ok.com',
      '--z', 'Content-Type: message/rfc822', 'Content-Disposition: attachment; filename="bad.eml"', '', 'not a header line at all', 'neither', '--z--', '',
    ].join('\r\n');
    const result = await readOrRefuse(Buffer.from(raw), 'carrier.eml');
    assert.ok(!(result instanceof FileReadError));
    assert.ok(find(result, 'outer-ok.com'));
    assert.equal(result.notes.length, 1);
    assert.match(result.notes[0]!, /^attachment bad\.eml: not an e-mail/);
  });

  test('a .msg whose allocation table loops, whose directory loops or whose stream claims 2 GB: refused at once (msgreader would loop or allocate)', async () => {
    for (const [name, bytes, problem] of [
      ['loop.msg', loopingMsg(), /allocation table loops/],
      ['directory-loop.msg', directoryLoopMsg(), /directory tree loops/],
      ['huge-stream.msg', hugeStreamMsg(), /claims more bytes than the file holds/],
    ] as const) {
      const started = Date.now();
      assert.match((await refused(bytes, name)).problem, problem, name);
      assert.ok(Date.now() - started < 2_000, `${name}: ${Date.now() - started} ms`);
    }
  });

  test('a truncated .msg and garbage behind the compound-file signature: refused', async () => {
    const { bytes } = phishingMsg();
    assert.match((await refused(bytes.subarray(0, 3000), 'cut.msg')).problem, /^Outlook \.msg truncated/);
    const garbage = new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, ...garbageBytes(6 * 512 - 8, 5, true)]);
    assert.match((await refused(garbage, 'garbage.msg')).problem, /^Outlook \.msg damaged/);
  });

  test('damaged bytes anywhere in an .eml or a .msg (seeded mutations): a result or a FileReadError, each quickly', async () => {
    const eml = (await phishingEml()).bytes;
    const msg = phishingMsg().bytes;
    let seed = 20240102;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (const [base, name, runs] of [[eml, 'mutated.eml', 60], [msg, 'mutated.msg', 300]] as const) {
      for (let run = 0; run < runs; run++) {
        const bytes = Buffer.from(base);
        for (let k = 1 + Math.floor(random() * 20); k > 0; k--) {
          const at = Math.floor(random() * (bytes.length - 4));
          // A random byte, or a small number where the structure keeps sector numbers and sizes.
          if (random() < 0.5) bytes[at] = Math.floor(random() * 256);
          else bytes.writeInt32LE(Math.floor(random() * 40) - 4, at & ~3);
        }
        const started = Date.now();
        const outcome = await readOrRefuse(bytes, name);
        assert.ok(Date.now() - started < 5_000, `${name} run ${run}: ${Date.now() - started} ms`);
        if (!(outcome instanceof FileReadError)) assertPlacesSafe(outcome);
      }
    }
  });
});
