/**
 * The SPF, DKIM and DMARC outcomes of an `Authentication-Results` header (RFC 8601):
 *
 *   Authentication-Results: mx.example.net; spf=pass smtp.mailfrom=a.example;
 *       dkim=fail (bad signature) header.d=a.example; dmarc=fail header.from=a.example
 *
 * The authserv-id comes first (the receiving system that wrote it), then `method=result` pairs,
 * each with its properties, separated by `;`; comments in parentheses may appear anywhere. Only
 * the first result of each method is kept (a message signed twice has two `dkim=`: the first is
 * the one the receiving system listed first). Which header to read (the topmost, added by the
 * receiving system; those below may come from the sender) is the caller's choice.
 */
import type { EmailAuth } from './types.js';
import { placeText } from './mail-text.js';

const METHODS = ['spf', 'dkim', 'dmarc'] as const;
/** A result is one keyword (pass, fail, softfail, neutral, none, temperror, permerror, policy...). */
const RESULT = /^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:\/\s*[0-9]+\s*)?=\s*([A-Za-z][A-Za-z0-9-]{0,31})(?![A-Za-z0-9-])/;

/** The outcomes named in one `Authentication-Results` value; undefined when it names no authserv-id. */
export function parseAuthenticationResults(value: string): EmailAuth | undefined {
  const parts = withoutComments(value).split(';');
  const authservId = parts[0]!.trim().split(/\s+/)[0];
  if (!authservId) return undefined;
  const auth: EmailAuth = { authserv_id: placeText(authservId, 100) };
  for (const part of parts.slice(1)) {
    const match = RESULT.exec(part);
    if (!match) continue;
    const method = match[1]!.toLowerCase();
    for (const known of METHODS) if (method === known && auth[known] === undefined) auth[known] = match[2]!.toLowerCase();
  }
  return auth;
}

/** `value` with its comments (nested parentheses, `\)` escapes) replaced by a space; quoted strings kept, but for their `;`. */
function withoutComments(value: string): string {
  let out = '';
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\' && (depth > 0 || quoted)) {
      if (depth === 0) out += value.slice(i, i + 2);
      i++;
    } else if (quoted) {
      // A `;` inside a quoted property value does not end a result.
      out += c === ';' ? ' ' : c;
      if (c === '"') quoted = false;
    } else if (c === '(') {
      depth++;
    } else if (c === ')' && depth > 0) {
      if (--depth === 0) out += ' ';
    } else if (depth === 0) {
      out += c;
      if (c === '"') quoted = true;
    }
  }
  return out;
}
