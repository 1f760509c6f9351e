/**
 * An e-mail's SPF, DKIM and DMARC outcomes (its `Authentication-Results` header, issue 35) in one
 * line of labels: in the form's preview of a dropped e-mail and at the top of the results page of
 * an analysis made from one. A pass reads green, a fail red, anything else (`softfail`, `none`,
 * `neutral`...) muted; the label spells the outcome, so the colour is never the only sign. The
 * outcomes and the authserv-id come from the file: text nodes, and attributes only through
 * setAttribute.
 */
import { el } from './dom.js';
import type { EmailAuthView } from '../../src/view/types.js';

const CHECKS = [
  { key: 'spf', label: 'SPF' },
  { key: 'dkim', label: 'DKIM' },
  { key: 'dmarc', label: 'DMARC' },
] as const;

/** `pass`, `fail` or `other`: how an outcome is coloured. */
function toneOf(result: string): 'pass' | 'fail' | 'other' {
  const word = result.trim().toLowerCase();
  if (word === 'pass') return 'pass';
  if (word === 'fail' || word === 'permerror' || word === 'temperror') return 'fail';
  return 'other';
}

/**
 * The line: `E-mail authentication: SPF pass · DKIM fail · DMARC none (by mx.example.com)`; a
 * check the header does not report is left out. `id` names the line (tests and the page's links).
 */
export function emailAuthLine(auth: EmailAuthView, id: string): HTMLElement {
  const checks = CHECKS.flatMap(({ key, label }) => {
    const result = auth[key];
    if (typeof result !== 'string' || result.trim() === '') return [];
    return [el('span', { class: 'auth-result', 'data-check': key, 'data-tone': toneOf(result) }, el('span', { class: 'auth-check' }, label), ' ', result)];
  });
  return el('p', { class: 'email-auth', id },
    el('span', { class: 'email-auth-label' }, 'E-mail authentication:'), ' ',
    checks.length > 0 ? checks : el('span', { class: 'muted' }, 'not reported'),
    auth.authserv_id ? el('span', { class: 'muted auth-by' }, ` (by ${auth.authserv_id})`) : null);
}
