/**
 * `extract_observables` with a file (issue 35): the API's preview of `POST {prefix}extract` for a
 * model. Each observable with where it was found and, when it is the team's own (internal_networks,
 * internal_domains), why (`internal`: analyze sends those to no third party); an e-mail's SPF,
 * DKIM and DMARC; what the reader could not read (notes). With a text besides, the text's
 * observables come first, as an analysis orders them. No engine is asked.
 *
 * Every text from the file is quoted as a JSON string under FILE_UNTRUSTED (src/mcp/shape.ts): a
 * sender writes link texts and attachment names, and "ignore your instructions" there is data.
 */
import { ObservableCollector, type FileExtraction } from '../files/types.js';
import type { InternalScope } from '../marking/policy.js';
import { extractObservables } from '../observables/extract.js';
import { FILE_UNTRUSTED, placesText, quoted } from './shape.js';

/** One observable of the answer: `found_in` absent for one only in the text. */
export interface ExtractedObservable {
  observable: string;
  type: string;
  found_in?: string[];
  internal?: string;
}

export interface FileExtractionAnswer {
  text: string;
  structured: Record<string, unknown>;
}

export function fileExtractionAnswer(text: string, extraction: FileExtraction, scope: InternalScope): FileExtractionAnswer {
  const all = new ObservableCollector();
  if (text.trim() !== '') for (const observable of extractObservables(text)) all.add(observable);
  for (const observable of extraction.observables) all.add(observable);
  const observables: ExtractedObservable[] = all.list().map((o) => {
    const internal = scope.reasonFor(o);
    return { observable: o.value, type: o.type, ...(o.found_in?.length ? { found_in: o.found_in } : {}), ...(internal ? { internal } : {}) };
  });
  const { file, email_auth: auth, notes } = extraction;
  const own = observables.filter((o) => o.internal).length;
  const lines = [
    `File ${quoted(file.name)} (${file.kind}, ${file.bytes} bytes): ${observables.length} observable(s)${text.trim() !== '' ? ', the text\'s first' : ''}${own > 0 ? `, ${own} of them the team's own (internal: analyze sends those to no third party)` : ''}. No lookup was made.`,
    FILE_UNTRUSTED,
  ];
  if (auth) {
    const checks = (['spf', 'dkim', 'dmarc'] as const).flatMap((key) => (auth[key] ? [`${key.toUpperCase()} ${quoted(auth[key])}`] : []));
    lines.push(`E-mail authentication: ${checks.join(', ') || 'not reported'}${auth.authserv_id ? ` (by ${quoted(auth.authserv_id)})` : ''}`);
  }
  lines.push(observables.length === 0
    ? 'No observable found.'
    : observables.map((o) => [
        `${quoted(o.observable)} (${o.type})`,
        o.found_in ? ` found in: ${placesText(o.found_in)}` : ' from the text',
        o.internal ? `; internal: ${quoted(o.internal)}` : '',
      ].join('')).join('\n'));
  if (notes.length > 0) lines.push(`Notes: ${placesText(notes)}`);
  return {
    text: lines.join('\n\n'),
    structured: { observables, file, ...(auth ? { email_auth: auth } : {}), notes },
  };
}
