/**
 * A request's files joined to its text (issue 35): the text's observables first, then each file's
 * in the order they first appear in it, one entry per observable whatever the number of places
 * (its `found_in` lists them all); and what the analysis's record keeps of the files.
 */
import type { Observable } from '../observables/types.js';
import { extensionOf } from './detect.js';
import { ObservableCollector, type AnalysisSource, type FileExtraction } from './types.js';

/**
 * The text's observables, then the files' in the order they first appear in each, one entry per
 * observable whatever the number of places it was found in (its `found_in` lists them all).
 */
export function withFileObservables(fromText: readonly Observable[], files: readonly FileExtraction[]): Observable[] {
  const all = new ObservableCollector();
  for (const observable of fromText) all.add(observable);
  for (const file of files) for (const observable of file.observables) all.add(observable);
  return all.list();
}

/** The files as an analysis's record keeps them: formats, extensions, sizes, the e-mail's authentication; no name, no content. */
export function sourceOf(files: readonly FileExtraction[]): AnalysisSource {
  const email = files.find((file) => file.email_auth);
  return {
    files: files.map((file) => ({ kind: file.file.kind, ext: extensionOf(file.file.name).slice(0, 10).replace(/[^a-z0-9]/g, ''), bytes: file.file.bytes })),
    ...(email?.email_auth ? { email_auth: email.email_auth } : {}),
  };
}
