/**
 * The hosts one `Received` header names (RFC 5321 section 4.4), public ones only:
 *
 *   Received: from mail.sender.example (mail.sender.example [203.0.113.5])
 *       by mx.receiver.example (Postfix) with ESMTPS id 4AbC; Tue, 2 Jan 2024 10:00:00 +0000
 *
 * The `from` clause (the name the client gave, and in the comment the name and address the
 * server saw) and the `by` clause (the server) are read; `via`, `with`, `id`, `for` and the date
 * are not (the recipient of `for` is the victim, an `id` is no indicator). A clause keyword only
 * counts outside comments: `(Postfix, from userid 1000)` starts no clause. Host names are those
 * the extractor takes for a domain under a real public suffix (`localhost`, `unknown`,
 * `host.lan` are left out); addresses are bracketed or bare, `IPv6:` prefixed or not, and only
 * public ones are kept: private, loopback, link-local, shared, documentation and other reserved
 * ranges (anything ipaddr.js's `range()` does not call `unicast`: src/observables/host.ts's
 * `isPrivateIp`, the runner's own test) say nothing about the sender.
 * A header is scanned once, left to right (a 1 MB header costs a linear pass).
 */
import { extractObservables } from '../observables/extract.js';
import { isPrivateIp } from '../observables/host.js';
import type { Observable } from '../observables/types.js';

const KEYWORDS = new Set(['from', 'by', 'via', 'with', 'id', 'for']);

/** The public IP addresses and host names of the `from` and `by` clauses of one `Received` value, in order. */
export function receivedHosts(value: string): Observable[] {
  const found: Observable[] = [];
  for (const clause of clausesOf(value)) {
    for (const observable of extractObservables(clause.replace(/IPv6:/gi, ' '))) {
      if (observable.type === 'FQDN') found.push(observable);
      else if ((observable.type === 'IPv4' || observable.type === 'IPv6') && !isPrivateIp(observable.value)) found.push(observable);
    }
  }
  return found;
}

/** The text of the `from` and `by` clauses, comments included, in their order. */
function clausesOf(value: string): string[] {
  // The date follows the last `;` (a `;` in a comment before it is rare and harmless).
  const semicolon = value.lastIndexOf(';');
  const text = semicolon >= 0 ? value.slice(0, semicolon) : value;
  const clauses: string[] = [];
  let current: string[] | undefined;
  let depth = 0;
  let word = '';
  const endWord = () => {
    if (!word) return;
    const keyword = word.toLowerCase();
    if (KEYWORDS.has(keyword)) {
      if (current) clauses.push(current.join(''));
      current = keyword === 'from' || keyword === 'by' ? [] : undefined;
    } else {
      current?.push(word);
    }
    word = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (depth > 0) {
      current?.push(c === '\\' ? ' ' : c);
      if (c === '\\') i++;
      else if (c === '(') depth++;
      else if (c === ')') depth--;
    } else if (c === '(') {
      endWord();
      depth = 1;
      current?.push(' (');
    } else if (/\s/.test(c)) {
      endWord();
      current?.push(' ');
    } else {
      word += c;
    }
  }
  endWord();
  if (current) clauses.push(current.join(''));
  return clauses;
}
