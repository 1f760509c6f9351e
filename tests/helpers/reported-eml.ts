/**
 * A small reported phishing e-mail for the surfaces' file tests (issue 35: the web form, MCP): a
 * public and a private `Received` hop, SPF and DMARC failing but DKIM passing, a `Reply-To`
 * elsewhere, a link in the text body, and the team's own intranet (acme-corp.com, to be set as
 * internal_domains) named in the body. The format's own corpus is tests/helpers/corpus-email.ts.
 */
export const REPORTED_EML = [
  'Received: from mail.invoice-secure.net (mail.invoice-secure.net [45.155.205.233]) by mx.acme-corp.com with ESMTPS; Tue, 3 Mar 2026 09:12:01 +0000',
  'Received: from relay (relay.local [10.20.30.40]) by mail.invoice-secure.net; Tue, 3 Mar 2026 09:11:58 +0000',
  'Authentication-Results: mx.acme-corp.com; spf=fail smtp.mailfrom=invoice-secure.net; dkim=pass header.d=invoice-secure.net; dmarc=fail header.from=invoice-secure.net',
  'From: "Billing" <billing@invoice-secure.net>',
  'Reply-To: <payments@collect-pay.org>',
  'To: <bob@acme-corp.com>',
  'Subject: Your invoice',
  'Message-ID: <m-4711@invoice-secure.net>',
  'Date: Tue, 3 Mar 2026 09:12:00 +0000',
  'MIME-Version: 1.0',
  'Content-Type: text/plain; charset=utf-8',
  '',
  'Please pay at http://pay-invoice.net/login today.',
  'Questions? See our portal intranet.acme-corp.com',
  '',
].join('\r\n');

/** The internal_domains setting that makes the e-mail's intranet (and its receiving server) the team's own. */
export const REPORTED_EML_INTERNAL = ['acme-corp.com'];
