/**
 * What `oas extract` and `POST /api/extract` answer (issue 35): a file's observables before
 * anything is sent, each marked `internal` (why) when it is the team's own (settings
 * internal_networks, internal_domains): the web form leaves those unchecked, and an analysis
 * would send them to no third party anyway.
 */
import type { InternalScope } from '../marking/policy.js';
import type { ObservableType } from '../observables/types.js';
import type { EmailAuth, FileExtraction, FileKind } from './types.js';

export interface PreviewObservable {
  value: string;
  type: ObservableType;
  found_in: string[];
  /** Why it is the team's own (`10.1.2.3 is a private address`); absent for the others. */
  internal?: string;
}

/** The JSON of `oas extract --json` and `POST /api/extract`. */
export interface ExtractionPreview {
  file: { name: string; kind: FileKind; bytes: number };
  observables: PreviewObservable[];
  email_auth?: EmailAuth;
  notes: string[];
}

export function previewOf(extraction: FileExtraction, scope: InternalScope): ExtractionPreview {
  return {
    file: extraction.file,
    observables: extraction.observables.map((o) => {
      const internal = scope.reasonFor(o);
      return internal ? { value: o.value, type: o.type, found_in: o.found_in, internal } : { value: o.value, type: o.type, found_in: o.found_in };
    }),
    ...(extraction.email_auth ? { email_auth: extraction.email_auth } : {}),
    notes: extraction.notes,
  };
}
